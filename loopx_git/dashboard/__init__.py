"""The static operator dashboard: ``build`` reads the branch and writes the site, ``page`` draws
its HTML, ``assets/`` holds its one stylesheet and one script."""
