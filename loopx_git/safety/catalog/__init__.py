"""The rule table, one module per family of formats; ``safety/rules.py`` puts them together."""
