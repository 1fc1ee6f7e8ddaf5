"""Traffic analytics: the request recorder, rollups, reports, anomalies and privacy tools."""
