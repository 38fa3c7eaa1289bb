"""`groundedness` (code variant): is every specific in the answer traceable to a source?

Sources are the request and every tool output (results and error messages). Specifics
(URLs, quoted values, dates, times, identifiers, numbers, proper names) are extracted
from the final answer by `turnscore.scorers.specifics`, each span of text counted once.
A specific is supported when a source holds it:

- numbers by value: `1,000` equals `1000`, `18.0` equals `18`, and an answer that rounds
  a source value (`18` or `18.3` for `18.34`) is supported; "18" never matches inside
  "180";
- dates in any of the forms (`2024-03-05` matches `March 5, 2024`); a date without a year
  matches on month and day;
- times by value (`9:30` matches `09:30`);
- everything else case-insensitively in the whitespace-collapsed source text, and names
  and quoted values also in the normalised source text (`scorers.text`).

The value is 1.0 when every specific is supported (label `grounded`), else 0.0
(`ungrounded`) with the unsupported ones listed; the hallucination rate is the share of
scored turns at 0.0. No final answer is `not_run`. When unsupported specifics remain and
some tool output was not captured, the turn is `inconclusive`: the missing output might
hold them.

Blind spot, by design: a claim with no specific token ("the flight is on time") cannot be
checked here and passes; the judge variant checks entailment claim by claim.

One implementation, over the whole batch with polars: the specifics of every answer come
from `specifics.extract`, and each is looked up in its turn's sources with joins and
per-row `contains` (`_supported`). Python runs per distinct unsupported text (its `repr`
and JSON) and per number that only a rounding of a finer source value could support.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

import orjson
import polars as pl

from turnscore.scorers.base import Case, Turns, scorer
from turnscore.scorers.specifics import (
    SOURCE_NUMBER,
    TIME_PARTS,
    dates_in,
    extract,
    times_in,
    without_nul,
    words_of,
)
from turnscore.scorers.text import normalize_expr

NAME = "groundedness"
# 2: one implementation (polars); text with characters on which Python's `re` and Rust
# regex disagree (combining marks, non-ASCII digits, ...) is read as Rust regex reads it
# (it went to a row-wise `re` reference before), and NUL as U+FFFD.
VERSION = "2"


@scorer(
    name=NAME,
    version=VERSION,
    kind="code",
    reads=("final_answer", "calls", "request"),
    description="1 when every specific in the answer (numbers, dates, names, quoted values, URLs) "
                "appears in a tool result or the request, else 0.",
)
def groundedness(turns: Turns, cases: Sequence[Case | None]) -> pl.DataFrame:
    frame = turns.frame
    return score_batch(frame.get_column("final_answer"), frame.get_column("request"),
                       frame.get_column("calls")).drop("row")


def score_batch(answers: pl.Series, requests: pl.Series, calls: pl.Series) -> pl.DataFrame:
    """The score columns (`base.SCORE_COLUMNS` plus `row`, the batch position)."""
    frame = pl.DataFrame({"answer": answers, "request": requests, "calls": calls}
                         ).with_row_index("row")
    sources = _sources(frame)
    frame = frame.with_columns(source=sources["source"])
    texts = frame.filter(pl.col("answer").is_not_null())
    specifics = extract(texts.select("row", t="answer"))
    verdicts = _supported(specifics, texts.select("row", "source"))
    return _assemble(frame, sources, verdicts)


def _sources(frame: pl.DataFrame) -> pl.DataFrame:
    """Per row: `source` (the request and every non-empty result and error, in call order,
    one a line), `outputs` (how many of those) and `uncaptured` (calls with neither).
    List expressions, not an exploded frame: no sort or group-by to put rows back."""
    call = pl.element()
    pairs = pl.col("calls").list.eval(
        pl.concat_list(call.struct.field("result"), call.struct.field("error")).explode())
    texts = pairs.list.eval(call.filter(call.is_not_null() & (call != "")))
    uncaptured = pl.col("calls").list.eval(
        call.is_not_null() & call.struct.field("result").is_null()
        & call.struct.field("error").is_null()).list.sum()
    outputs = pl.col("texts").list.len().fill_null(0).cast(pl.Int64)
    # NUL marks matches in `specifics._spans`: read as U+FFFD, as in the answers.
    return frame.select("row", "request", texts=texts, uncaptured=uncaptured).select(
        "row",
        source=without_nul(pl.when(outputs == 0).then(pl.col("request").fill_null(""))
                           .otherwise(pl.col("request").fill_null("") + "\n"
                                      + pl.col("texts").list.join("\n"))),
        outputs=outputs,
        uncaptured=pl.col("uncaptured").fill_null(0).cast(pl.Int64))



def _supported(specifics: pl.DataFrame, sources: pl.DataFrame) -> pl.DataFrame:
    """Each specific with `ok`, whether a source supports it: numbers by value (or as a
    rounding of a finer source value), dates and times by value, the rest verbatim
    (case-insensitive, whitespace collapsed) and names and quoted values also in the
    normalised sources."""
    collapsed = _collapsed(pl.col("source").str.to_lowercase())
    sources = sources.with_columns(lower=collapsed)
    spec = specifics.with_row_index("sid").join(sources, on="row", how="left")
    lowered = _collapsed(pl.col("text").str.to_lowercase())
    spec = spec.with_columns(
        verbatim=(pl.col("kind") != "number")
        & pl.col("lower").str.contains(lowered, literal=True))
    ok = spec.filter("verbatim").select("sid")
    # Numbers by value: the same canonical text (no grouping commas, leading zeros or
    # trailing fraction zeros) is the same Decimal.
    numbers = spec.filter(pl.col("kind") == "number")
    if not numbers.is_empty():
        rows = numbers.select("row").unique().join(sources, on="row")
        found = (rows.select("row", n=pl.col("source").str.extract_all(SOURCE_NUMBER))
                 .explode("n"))
        found = _backtracked(found.filter(pl.col("n").is_not_null()))
        # The same text (most numbers), else the same value, else a rounding.
        same = numbers.join(found.select("row", text="n"), on=["row", "text"], how="semi")
        rest = numbers.join(same, on="sid", how="anti")
        values = (found.join(rest.select("row").unique(), on="row", how="semi")
                  .select("row", v=_canonical(pl.col("n"))).unique())
        rest = rest.with_columns(v=_canonical(pl.col("text")))
        by_value = rest.join(values, on=["row", "v"], how="semi")
        rest = rest.join(by_value, on="sid", how="anti")
        ok = pl.concat([ok, same.select("sid"), by_value.select("sid"), _rounded(rest, found)])
    pending = spec.filter(~pl.col("verbatim") & (pl.col("kind") != "number"))
    dates = pending.filter(pl.col("kind") == "date")
    if not dates.is_empty():
        rows = dates.select("row").unique().join(sources, on="row").select("row", t="source")
        found = dates_in(rows).select("row", "y", "mo", "d").unique()
        exact = dates.filter(pl.col("y").is_not_null()).join(found, on=["row", "y", "mo", "d"],
                                                             how="semi")
        day = dates.join(found.select("row", "mo", "d").unique(), on=["row", "mo", "d"],
                         how="semi").filter(pl.col("y").is_null())
        ok = pl.concat([ok, exact.select("sid"), day.select("sid")])
    times = pending.filter(pl.col("kind") == "time")
    if not times.is_empty():
        rows = times.select("row").unique().join(sources, on="row").select("row", t="source")
        found = times_in(words_of(rows))
        g = pl.col("text").str.extract_groups(TIME_PARTS)
        times = times.with_columns(mo=g.struct[0].cast(pl.Int32), d=g.struct[1].cast(pl.Int32))
        ok = pl.concat([ok, times.join(found.select("row", "mo", "d").unique(),
                                       on=["row", "mo", "d"], how="semi").select("sid")])
    words = pending.filter(pl.col("kind").is_in(["name", "quoted"]))
    if not words.is_empty():
        norm = normalize_expr(pl.col("text"))
        padded = " " + normalize_expr(pl.col("source")) + " "
        hit = words.filter((norm != "") & padded.str.contains(" " + norm + " ", literal=True))
        ok = pl.concat([ok, hit.select("sid")])
    verdicts = spec.select("sid", "row", "kind", "text").with_columns(
        ok=pl.col("sid").is_in(ok["sid"].implode()))
    return verdicts


def _collapsed(text: pl.Expr) -> pl.Expr:
    """`" ".join(text.split())`: only whitespace that is not a lone space is replaced (a
    replacement per space costs more than the rest)."""
    return text.str.replace_all(r"[^\S ]\s*|\s{2,}", " ").str.strip_chars()


def _canonical(number: pl.Expr) -> pl.Expr:
    """A number's text in one form per value: `1,000.50` and `01000.5` give `1000.5`."""
    plain = number.str.replace_all(",", "", literal=True)
    plain = (pl.when(plain.str.contains(".", literal=True))
             .then(plain.str.strip_chars_end("0").str.strip_chars_end("."))
             .otherwise(plain).str.strip_chars_start("0"))
    return (pl.when(plain == "").then(pl.lit("0"))
            .when(plain.str.starts_with(".")).then("0" + plain).otherwise(plain))


def _backtracked(found: pl.DataFrame) -> pl.DataFrame:
    """Source numbers (row, n) as a backtracking engine finds them: a grouped number with a
    digit after its last group (`1,2345`) is the number before that group (`1`) and the
    digits of the last (`2345`)."""
    bad = pl.col("n").str.contains(r",\d{4}$")
    split = found.filter(bad)
    if split.is_empty():
        return found
    return pl.concat([
        found.filter(~bad),
        split.select("row", n=pl.col("n").str.replace(r",\d{4}$", "")),
        split.select("row", n=pl.col("n").str.extract(r",(\d{4})$", 1)),
    ])


def _rounded(numbers: pl.DataFrame, found: pl.DataFrame) -> pl.DataFrame:
    """The numbers (sid, row, text) that round a finer source value of their row (found:
    row, n): an answer's `18` or `18.3` for a source's `18.34` (rare: most of these
    numbers are not in the sources at all, so Python runs on few)."""
    finer = found.filter(pl.col("n").str.contains(".", literal=True)).unique()
    pairs = numbers.select("sid", "row", "text").join(finer, on="row")
    sid = sorted({s for s, text, n in pairs.select("sid", "text", "n").iter_rows()
                  if _rounds_to(n, text)})
    return pl.DataFrame({"sid": sid}, schema={"sid": pl.UInt32})


def _rounds_to(source: str, answer: str) -> bool:
    """Whether the source number rounds (half up) to the answer's, at the answer's
    places, having more of them."""
    try:
        value, n = _decimal(answer), _decimal(source)
    except InvalidOperation:
        return False
    exponent, places = value.as_tuple().exponent, n.as_tuple().exponent
    if not isinstance(exponent, int) or not isinstance(places, int) or places >= exponent:
        return False
    try:
        return n.quantize(Decimal(1).scaleb(exponent), ROUND_HALF_UP) == value
    except InvalidOperation:  # too many digits for the context: not a rounding of `value`
        return False


def _decimal(text: str) -> Decimal:
    return Decimal(text.replace(",", ""))


def _assemble(frame: pl.DataFrame, sources: pl.DataFrame, verdicts: pl.DataFrame,
              ) -> pl.DataFrame:
    """The score columns of the rows of `frame`, from the verdicts on their specifics."""
    unsupported = verdicts.filter(~pl.col("ok"))
    texts = unsupported["text"].unique().to_list()
    shown = pl.DataFrame({"text": texts,
                          "json": [orjson.dumps(t).decode() for t in texts],
                          "repr": [repr(t) for t in texts]}, schema={
                              "text": pl.String, "json": pl.String, "repr": pl.String})
    listed = (unsupported.join(shown, on="text", how="left").sort("sid")
              .group_by("row", maintain_order=True).agg(
                  items=pl.concat_str(pl.lit('{"kind":"'), "kind", pl.lit('","text":'), "json",
                                      pl.lit("}")).str.join(","),
                  listed=pl.format("{} {}", "kind", "repr").str.join(", "),
                  missing=pl.len()))
    counts = verdicts.group_by("row").agg(n=pl.len())
    rows = (frame.select("row", "answer").join(sources, on="row", how="left")
            .join(counts, on="row", how="left").join(listed, on="row", how="left")
            .with_columns(n=pl.col("n").fill_null(0), missing=pl.col("missing").fill_null(0))
            .sort("row"))
    none = pl.col("answer").is_null()
    grounded = pl.col("missing") == 0
    aside = pl.col("uncaptured") > 0
    # `details_json` of `_Prepared.score`'s details: orjson's compact form, keys in order.
    head = pl.concat_str(pl.lit('{"specifics":'), "n", pl.lit(',"unsupported":['))
    outputs = pl.concat_str(pl.lit('],"tool_outputs":'), "outputs")
    details = (pl.when(none).then(pl.lit("{}"))
               .when(grounded).then(pl.concat_str(head, outputs, pl.lit("}")))
               .when(aside).then(pl.concat_str(head, "items", outputs,
                                               pl.lit(',"uncaptured_outputs":'), "uncaptured",
                                               pl.lit("}")))
               .otherwise(pl.concat_str(head, "items", outputs, pl.lit("}"))))
    explanation = (
        pl.when(none).then(pl.lit("the turn has no final answer"))
        .when(grounded & (pl.col("n") > 0))
        .then(pl.format("all {} specifics traced to the request or tool output", "n"))
        .when(grounded).then(pl.lit("no checkable specifics in the answer"))
        .when(aside).then(pl.format("{} tool output(s) not captured; cannot trace: {}",
                                    "uncaptured", "listed"))
        .otherwise(pl.format("not in the request or any tool output: {}", "listed")))
    return rows.select(
        "row",
        status=pl.when(none).then(pl.lit("not_run")).when(grounded).then(pl.lit("scored"))
        .when(aside).then(pl.lit("inconclusive")).otherwise(pl.lit("scored")),
        value=pl.when(none).then(None).when(grounded).then(1.0).when(aside).then(None)
        .otherwise(0.0).cast(pl.Float64),
        label=pl.when(none).then(None).when(grounded).then(pl.lit("grounded"))
        .when(aside).then(None).otherwise(pl.lit("ungrounded")).cast(pl.String),
        explanation=explanation,
        details=details,
    )


