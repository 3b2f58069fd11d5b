"""Loaded by pytest for every run inside the repository, a single chapter's included
(`pytest chapters/NAME.ipynb`): the session's temp folder and the seed shift, from
tests/book_session.py."""

pytest_plugins = ["tests.book_session"]
