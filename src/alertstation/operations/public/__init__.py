"""Public pages and the home dashboard's helpers: the docs site, support and repo stats."""
