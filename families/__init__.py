"""Design families as plug-ins: one folder per audit design (see docs/architecture.md).

    families/influence/   direction-flipped influence pairs (seed 000)
    families/cue/         cue visibility (seed 003)
"""

from spec_audits.families.interface import DesignContext, Family
from spec_audits.families.registry import get, names, register, unregister

__all__ = ["DesignContext", "Family", "get", "names", "register", "unregister"]
