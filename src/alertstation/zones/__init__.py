"""The zone catalog: UGC zones loaded from the agency's DBF files, and zone code checks.

Modules: ``loader`` (DBF → records), ``resolver`` (which file per family), ``service`` (sync and
start-up ensure), ``catalog`` (cached lookups), ``fips`` (county FIPS and SAME codes), ``validate``
(code checks) and ``cli`` (``alertstation zones``). See docs/zones.md.
"""

from alertstation.zones.validate import split_known, validate_zone_codes

__all__ = ["split_known", "validate_zone_codes"]
