"""The question's bounded graph as one typed value, read in one DuckDB query.

GraphRank walks it and the evidence tree is cut from it, so both read the same graph and nothing
reads it again within a round. The read goes two link hops out from where the question points:

    entry    the question's entities and the two ends of the graph-index facts it hit
    first    the entry entities' passage links (their degree: how many passages each names)
    facts    named-relation facts touching those entities, most confident first (`cap` rows)
    near     links of those entities, of the facts' ends, and of the dense passages (`cap`, capped)
    far      links of the entities the near passages name (`cap`, capped)
    names    every linked entity's name

Capping keeps title links and specific (low-degree) entities first, so the read's cost follows the
question, not the graph's size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from enrich_rag.storage.schema import COOCCURS, Edge


@dataclass(frozen=True)
class Link:
    """An entity and a passage that names it (or is its page: `is_title`), one row however many
    partitions saw the pair; `degree`: how many passages the entity links to."""

    node: str
    chunk_id: str
    doc_id: str
    count: int
    is_title: bool
    degree: int


@dataclass(frozen=True)
class Neighbourhood:
    links: list[Link] = field(default_factory=list)  # near, then far, each pair once
    facts: list[Edge] = field(default_factory=list)  # named-relation facts among the entry entities
    names: dict[str, str] = field(default_factory=dict)  # entity id -> name, for every linked entity
    degree: dict[str, int] = field(default_factory=dict)  # entry entity -> passages it links to (those with any)
    hits: list[Edge] = field(default_factory=list)  # the graph-index facts the question hit, as stored


def _pairs(name: str, wanted: str) -> str:
    """One row per (entity, passage) among `wanted` links, with the entity's degree over all links."""
    return f"""
    {name}_pairs AS (
        SELECT node, chunk_id, any_value(doc_id) AS doc_id, max(count) AS count, bool_or(is_title) AS is_title
        FROM ({wanted}) GROUP BY node, chunk_id
    ), {name} AS (
        SELECT p.*, d.degree FROM {name}_pairs p
        JOIN (SELECT node, count(DISTINCT chunk_id) AS degree FROM links
              WHERE node IN (SELECT DISTINCT node FROM {name}_pairs) GROUP BY node) d USING (node)
    )"""


def _capped(name: str, source: str) -> str:
    return f"""
    {name} AS (
        SELECT *, row_number() OVER (ORDER BY NOT is_title, degree, node, chunk_id) AS rank FROM {source}
        QUALIFY rank <= $cap
    )"""


LINK = "{'node': node, 'chunk_id': chunk_id, 'doc_id': doc_id, 'count': count, 'is_title': is_title, 'degree': degree}"
# $nodes: entry entity ids; $edges: graph-index fact ids; $chunks: dense passage ids; $cap: max_links.
NEIGHBOURHOOD_SQL = f"""
WITH hit_edges AS (
    SELECT * FROM edges WHERE id IN (SELECT unnest($edges::VARCHAR[]))
), entry AS (
    SELECT unnest($nodes::VARCHAR[]) AS node UNION SELECT src FROM hit_edges UNION SELECT dst FROM hit_edges
),
{_pairs("first", "SELECT * FROM links WHERE node IN (SELECT node FROM entry)")},
first_nodes AS (SELECT DISTINCT node FROM first),
touching AS (
    SELECT * FROM edges WHERE src IN (SELECT node FROM first_nodes)
    UNION ALL
    SELECT * FROM edges WHERE dst IN (SELECT node FROM first_nodes) AND src NOT IN (SELECT node FROM first_nodes)
), facts AS (
    SELECT * FROM (
        SELECT *, row_number() OVER (ORDER BY confidence DESC, id) AS rank FROM touching QUALIFY rank <= $cap
    ) WHERE relation <> '{COOCCURS}'
), near_nodes AS (
    SELECT node FROM first_nodes UNION SELECT src FROM facts UNION SELECT dst FROM facts
),
{
    _pairs(
        "near_all",
        '''SELECT * FROM links WHERE node IN (SELECT node FROM near_nodes)
                       UNION ALL SELECT * FROM links WHERE chunk_id IN (SELECT unnest($chunks::VARCHAR[]))''',
    )
},
{_capped("near", "near_all")},
{_pairs("far_all", "SELECT * FROM links WHERE node IN (SELECT DISTINCT node FROM near)")},
{_capped("far", "far_all")}
SELECT
    (SELECT list(h) FROM hit_edges h) AS hits,
    (SELECT list(f ORDER BY rank) FROM facts f) AS facts,
    (SELECT list({LINK} ORDER BY rank) FROM near) AS near,
    (SELECT list({LINK} ORDER BY rank) FROM far) AS far,
    (SELECT list({{'node': node, 'degree': degree}} ORDER BY node) FROM (SELECT DISTINCT node, degree FROM first)) AS degree,
    (SELECT list({{'id': id, 'name': name}}) FROM nodes
     WHERE id IN (SELECT node FROM near UNION SELECT node FROM far)) AS names
"""


def neighbourhood_from_row(row: dict[str, Any]) -> Neighbourhood:
    """The query's one row as the typed value: links near-first, each (entity, passage) pair once."""
    links: dict[tuple[str, str], Link] = {}
    for r in [*(row["near"] or []), *(row["far"] or [])]:
        links.setdefault((r["node"], r["chunk_id"]), Link(**r))
    return Neighbourhood(
        list(links.values()),
        [Edge.from_row(f) for f in row["facts"] or []],
        {n["id"]: n["name"] for n in row["names"] or []},
        degree={d["node"]: d["degree"] for d in row["degree"] or []},
        hits=[Edge.from_row(h) for h in row["hits"] or []],
    )
