"""A bare Flask app with the two benchmarked routes, as a plain Flask app would write them."""

from __future__ import annotations

from flask import Flask, jsonify, request

from benchmarks.http.peer_data import AlertsPage, BroadcastDocument, engine_from_env, page_args


def create_app() -> Flask:
    """Return the bare Flask app on the database named by ``BENCH_DATABASE_URL``."""
    engine = engine_from_env()
    document = BroadcastDocument(engine)
    pages = AlertsPage(engine)
    app = Flask(__name__)

    @app.get("/api/broadcast/state")
    def broadcast_state():  # type: ignore[no-untyped-def]
        answer = jsonify(document.state())
        answer.headers["Cache-Control"] = "no-store"
        return answer

    @app.get("/api/alerts")
    def alerts():  # type: ignore[no-untyped-def]
        limit, offset = page_args(request.args.get("limit"), request.args.get("offset"))
        return jsonify(pages.page(limit, offset))

    return app
