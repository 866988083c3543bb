"""The application layer: ``StateRepo`` (``loopx_git/api.py``) is made of these families, each a
class of the methods of one protocol family over ``core.Core``, which holds what every family uses
(the tip, the fold, the answers kept by tip, ``apply``: one write as one commit). A family reads the
state and runs the domain's operations; it holds no rules of its own."""
