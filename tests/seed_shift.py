"""IPython startup script: shift every seed a notebook sets by BOOK_SEED_OFFSET.

The test run copies this file into the kernels' IPython profile (tests/book_session.py), so
that nbval executes each chapter with other random numbers than the book build does: a
numeric check that holds for the seeds the chapter was written with only fails the run.
Each call `torch.manual_seed(s)`, `g.manual_seed(s)`, `np.random.seed(s)`, `random.seed(s)`,
`np.random.default_rng(s)` or `seed_everything(s)` in a cell's code becomes
`...(s + BOOK_SEED_OFFSET)`. Code a cell writes to a file (`%%writefile`) is not shifted.
Everything is defined inside one function, so the script leaves no name in the notebook's
namespace (a chapter that forgets an import must still fail)."""


def _book_shift_seeds():
    import ast
    import os

    offset = int(os.environ.get("BOOK_SEED_OFFSET", "0"))
    calls = {"manual_seed", "manual_seed_all", "seed", "default_rng", "seed_everything"}

    class ShiftSeeds(ast.NodeTransformer):
        """Add the offset to the first argument of every seeding call."""

        def visit_Call(self, node):
            self.generic_visit(node)
            func = node.func
            name = (
                func.attr
                if isinstance(func, ast.Attribute)
                else getattr(func, "id", "")
            )
            if (
                name in calls
                and node.args
                and not isinstance(node.args[0], ast.Starred)
            ):
                shifted = ast.BinOp(node.args[0], ast.Add(), ast.Constant(offset))
                node.args[0] = ast.copy_location(shifted, node.args[0])
            return node

    if offset:
        get_ipython().ast_transformers.append(ShiftSeeds())  # noqa: F821


_book_shift_seeds()
del _book_shift_seeds
