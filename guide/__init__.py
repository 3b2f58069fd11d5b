"""The book's own code: the notebook and chapter model, the book's vocabulary, the tools
behind `make sync`, `make chapter` and `make strip`, and the Sphinx extension.

The chapters never import it: each holds its shared cells inline (written by `make sync`
from guide/cells/), so a downloaded chapter runs on its own. Installed editable by
`make install`.
"""
