"""The station's boundary (a GeoJSON area) and matching alert polygons and circles against it."""
