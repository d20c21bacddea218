"""Asked relations, on both graph backends: when the query's terms name a relation a seed has
("who reports to Sarah?"), the walk is re-rooted at the relation's other end. Expected values are
hand-computed from `fused_memory.store.graph_common` (module docstring, "Asked relations").

The office below: Tom -reports_to-> Sarah (0.9), Lena -reports_to-> Sarah (0.8),
Tom -works_on-> Kestrel (1.0), Sarah -mentors-> Xavier (semantic 0.9), one memory per person."""

from __future__ import annotations

import pytest
from graph_contract import NOW, NS, Factory, approx, details, link, scores

from fused_memory.retrievers.base import ArmRequest
from fused_memory.retrievers.graph import GraphRetriever
from fused_memory.query.relations import asks_relation
from fused_memory.store import graph_common as gc
from fused_memory.store.protocols import GraphStore, Relation
from fused_memory.text import tokenize
from fused_memory.types import EntityCandidate, EntityRef, MemoryType, ParsedQuery

REPORT = frozenset({"report"})


def office(g: GraphStore) -> None:
    link(g, NS, ("s1", ["Sarah"]), ("t1", ["Tom"]), ("l1", ["Lena"]), ("k1", ["Kestrel"]), ("x1", ["Xavier"]))
    g.relate(NS, Relation("Tom", "reports_to", "Sarah", "structural", 0.9))
    g.relate(NS, Relation("Lena", "reports_to", "Sarah", "structural", 0.8))
    g.relate(NS, Relation("Tom", "works_on", "Kestrel", "structural", 1.0))
    g.relate(NS, Relation("Sarah", "mentors", "Xavier", "semantic", 0.9))


@pytest.mark.parametrize(("rel", "asked", "expected"), [
    ("reports_to", {"report"}, True),              # "who reports to Sarah?": "to" is a stopword
    ("reports_to", {"report", "sarah"}, True),     # other terms do not stop it
    ("reports_to", {"sarah"}, False),
    ("works_on", {"work", "kestrel"}, True),
    ("works_on", {"kestrel"}, False),
    ("is_a", {"is", "a"}, False),                  # a name of stopwords only names nothing
    ("reports_to", set(), False),
])
def test_which_relation_a_query_asks_for(rel: str, asked: set[str], expected: bool) -> None:
    assert asks_relation(rel, frozenset(asked)) is expected


def test_an_asked_relation_reroots_the_walk(make: Factory) -> None:
    g = make()
    office(g)
    # not asked: Sarah's own memory first, her reports one hop behind
    assert scores(g, [("sarah", 1.0)]) == approx(
        {"s1": 1.0, "t1": 0.6 * 0.9, "x1": 0.6 * 0.9 * 0.9, "l1": 0.6 * 0.8, "k1": 0.35 * 0.9})
    # asked: her reports start at hop 0 (seed x edge), Sarah is one hop behind (x 0.6), and the rest
    # counts hops from the reports: Kestrel through Tom at hop 1, Xavier through Sarah at hop 1
    assert scores(g, [("sarah", 1.0)], asked=REPORT) == approx(
        {"t1": 0.9, "l1": 0.8, "s1": 0.6, "k1": 0.6 * 0.9, "x1": 0.6 * (0.6 * 0.9 * 0.9)})
    got = details(g, [("sarah", 1.0)], asked=REPORT)
    assert got["t1"] == "Sarah <-reports_to- Tom -> memory (hop 0, asked relation)"
    assert got["k1"] == "Sarah <-reports_to- Tom -works_on-> Kestrel -> memory (hop 1, asked relation)"
    assert got["s1"] == "Sarah -> memory (hop 0)"
    assert got["x1"] == "Sarah -mentors-> Xavier -> memory (hop 1)"


def test_rerooting_respects_depth_limit_weights_and_types(make: Factory) -> None:
    g = make()
    office(g)
    assert scores(g, [("sarah", 1.0)], hops=0, asked=REPORT) == approx({"t1": 0.9, "l1": 0.8, "s1": 0.6})
    assert [h.memory_id for h in g.traverse(NS, [("sarah", 1.0)], 3, 2, NOW, asked=REPORT)] == ["t1", "l1"]
    assert scores(g, [("sarah", 0.5)], hops=0, asked=REPORT) == approx({"t1": 0.45, "l1": 0.4, "s1": 0.3})
    assert scores(g, [("sarah", 1.0)], hops=1, multi_hop_factor=0.8, asked=REPORT) == approx(
        {"t1": 0.9, "l1": 0.8, "s1": 0.6, "k1": 0.8 * 0.6 * 0.9, "x1": 0.8 * 0.6 * (0.6 * 0.9 * 0.9)})
    link(g, NS, ("t2", ["Tom"]), mtype=MemoryType.EVENT)
    assert scores(g, [("sarah", 1.0)], hops=0, asked=REPORT, types=frozenset({MemoryType.EVENT})) == \
        approx({"t2": 0.9})
    # an answer's memories spread (ANSWER_SPREAD): Tom's latest 0.9, his next x 0.9; Sarah's do not
    link(g, NS, ("s2", ["Sarah"]))
    assert scores(g, [("sarah", 1.0)], hops=0, asked=REPORT) == approx(
        {"t2": 0.9, "t1": 0.9 * gc.ANSWER_SPREAD, "l1": 0.8, "s1": 0.6, "s2": 0.6})
    assert gc.ANSWER_SPREAD == 0.9


def test_both_ends_named_meet_in_the_middle(make: Factory) -> None:
    """"Does Tom report to Sarah?": each seed is the other's answer, so both keep the edge's score."""
    g = make()
    office(g)
    got = scores(g, [("tom", 1.0), ("sarah", 1.0)], hops=0, asked=REPORT)
    assert got == approx({"t1": 0.9, "s1": 0.9, "l1": 0.8})


def test_terms_that_name_no_relation_of_the_seed_change_nothing(make: Factory) -> None:
    g = make()
    office(g)
    plain = scores(g, [("sarah", 1.0)])
    assert scores(g, [("sarah", 1.0)], asked=frozenset({"lunch", "berlin"})) == plain
    assert scores(g, [("sarah", 1.0)], asked=frozenset({"work"})) == plain  # works_on is Tom's, not Sarah's
    link(g, NS, ("sx", ["Sarah", "Xavier"]))  # a co-mention edge: a hint, never asked for
    assert scores(g, [("xavier", 1.0)], asked=frozenset({"co", "mention"})) == scores(g, [("xavier", 1.0)])


def test_the_graph_arm_asks_with_the_query_terms(make: Factory) -> None:
    g = make()
    office(g)
    sarah = EntityRef("Sarah", (EntityCandidate("sarah", "Sarah", 1.0),))
    text = "who reports to Sarah?"
    request = ArmRequest(query=ParsedQuery(text=text, now=NOW, terms=tuple(tokenize(text)), entity_refs=(sarah,)),
                         namespace=NS, k=3, max_hops=2)
    assert [h.memory_id for h in GraphRetriever(g).search(request)] == ["t1", "l1", "s1"]


class _CountingSource:
    """A `TraversalSource` that counts the `edges` reads (one round trip each on a server)."""

    def __init__(self, inner: gc.TraversalSource) -> None:
        self.inner, self.edge_reads = inner, 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def edges(self, handles: list[str], cap: int) -> dict[str, list[gc.EdgeView]]:
        self.edge_reads += 1
        return self.inner.edges(handles, cap)


def test_looking_for_an_asked_relation_costs_no_extra_edge_read(tmp_path: object) -> None:
    """The seeds' edges read to look for the asked relation are the ones the first hop follows."""
    from fused_memory.store.graph_embedded import EmbeddedGraphStore
    g = EmbeddedGraphStore(str(tmp_path))
    g.open()
    try:
        office(g)
        reads = {}
        for asked in (frozenset(), frozenset({"lunch"}), REPORT):
            src = _CountingSource(g._check(NS, write=False))
            gc.traverse_source(src, [("sarah", 1.0)], 1, 50, NOW, asked=asked)
            reads[asked] = src.edge_reads
        assert reads == {frozenset(): 1, frozenset({"lunch"}): 1, REPORT: 2}  # REPORT: Tom's and Lena's edges
    finally:
        g.close()


def test_entities_list_their_relations(make: Factory) -> None:
    """Entity.relations: explicit relations either way, not co-mentions, not within an alias group."""
    g = make()
    office(g)
    link(g, NS, ("sx", ["Sarah", "Xavier"]))
    g.add_alias(NS, "Sarah", "Sally")
    g.relate(NS, Relation("Sally", "is_also", "Sarah", "semantic", 1.0))
    ents = {e.id: e.relations for e in g.entities(NS)}
    assert ents == {"sarah": ("mentors", "reports_to"), "tom": ("reports_to", "works_on"), "lena": ("reports_to",),
                    "kestrel": ("works_on",), "xavier": ("mentors",)}
    assert [e.relations for e in g.resolve(NS, "Sally")] == [("mentors", "reports_to")]
    before = g.entities(NS)
    assert make().entities(NS) == before  # the same after a reopen (the factory closes `g`)
