"""Design families that ship as worked examples of the family API (spec_audits.sdk, docs/families.md)."""
