"""`spec report`: a self-contained HTML and a Markdown report, with PNG plots, from a `spec score` folder."""
