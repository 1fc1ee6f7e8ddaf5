"""API tokens for automation clients: service (create, look up, revoke), resources, routes."""
