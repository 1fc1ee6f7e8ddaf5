"""CAP alerts: ingest, storage and matching of alert geocodes against the station's zones."""
