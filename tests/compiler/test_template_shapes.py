"""The static attribute check follows names into loops, `set` and `with`, and accepts what it cannot know
(the exact messages and places of its errors are in tests/fixtures/malformed/*misspelt*.spec)."""

from __future__ import annotations

import pytest

from spec_audits.compiler.sandbox import environment
from spec_audits.compiler.template_shapes import Items, Misspelt, misspelt_attributes, record

PERSON = record(("name", "gender"))
SCHEMA = {"first": record(("n", "noun")), "people": Items(PERSON),
          "ex": Items(record(("answer",), item=record(("context", "question"))))}


def found(template: str) -> list[tuple[str, int]]:
    return [(m.dotted, m.lineno) for m in misspelt_attributes(environment().parse(template), SCHEMA)]


@pytest.mark.parametrize(("template", "expected"), [
    ("{% for p in people %}{{ p.nmae }}{% endfor %}", [("p.nmae", 1)]),
    ("{% for e in ex %}\n{{ e.item.contxt }} {{ e.answer }}{% endfor %}", [("e.item.contxt", 2)]),
    ("{% for p in people | reverse %}{{ p.gendr }}{% endfor %}", [("p.gendr", 1)]),
    ("{{ people[0].nmae }} {{ (people | first).nmae }}", [("people[0].nmae", 1), ("(...).nmae", 1)]),
    ("{% for p in people[1:] if p.nmae %}{{ loop.previtem.gendr }}{{ loop.indx }}{% endfor %}",
     [("p.nmae", 1), ("loop.previtem.gendr", 1), ("loop.indx", 1)]),
    ("{% set lead = people[0] %}{% with f = first %}{{ lead.nmae }}{{ f.nuon }}{% endwith %}",
     [("lead.nmae", 1), ("f.nuon", 1)]),
    ("{% if x %}{% set a = first %}{{ a.nuon }}{% endif %}", [("a.nuon", 1)]),
    ("{{ first.nuon }}{{ first.nuon }}", [("first.nuon", 1)]),
    ("{% for first in stuff %}{{ first.anything }}{% endfor %}{{ first.nuon }}", [("first.nuon", 1)]),
    ("{{ first.nuon }}{% set first = stuff %}{{ first.anything }}", [("first.nuon", 1)]),
])
def test_a_misspelt_attribute_is_found_where_the_name_is_known(template: str,
                                                              expected: list[tuple[str, int]]) -> None:
    assert found(template) == expected


@pytest.mark.parametrize("template", [
    "{% for x in stuff %}{{ x.anything }}{% endfor %}",  # an iterable the design does not describe
    "{{ unknown.anything }}",
    "{% for k, v in first | dictsort %}{{ v.anything }}{% endfor %}",  # unpacked: unknown shape
    "{% if x %}{% set a = first %}{% else %}{% set a = stuff %}{% endif %}{{ a.anything }}",
    "{{ first.get('noun') }} {{ first.items() }}",  # methods: the sandbox judges the call
    "{% macro m(first) %}{{ first.anything }}{% endmacro %}{{ m(stuff) }}",
    "{% for p in people %}{% else %}{{ p.anything }}{% endfor %}",  # `else` runs outside the loop
    "{{ loop.anything }} {{ first['anything'] }} {{ people.anything }}",
    "{% set t %}{{ first.n }}{% endset %}{{ t.anything }}",
    "{% for p in people | map(attribute='name') %}{{ p.anything }}{% endfor %}",
])
def test_values_of_unknown_shape_are_accepted(template: str) -> None:
    assert found(template) == []


def test_the_candidates_are_the_keys_of_the_value_read() -> None:
    [miss] = misspelt_attributes(environment().parse("{% for e in ex %}{{ e.item.contxt }}{% endfor %}"), SCHEMA)
    assert miss == Misspelt("e.item.contxt", "contxt", ("context", "question"), 1)
