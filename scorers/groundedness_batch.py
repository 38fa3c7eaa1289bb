"""Groundedness over a whole batch at once, with polars: the same verdicts as the row-wise
reference (`groundedness._scores`), without a Python pass per turn.

The specifics of every answer are found with the Rust regex engine behind polars, one
expression per pattern over the batch, as (row, start, text) spans (`_spans`); their
claims (each span of an answer counted once, patterns in extraction order) are settled on
those spans (`_claim`), and each specific is looked up in its turn's sources with joins
and per-row `contains` (`_supported`). Python runs per distinct unsupported text (its
`repr` and JSON) and per number that only a rounding could support, not per turn.

Rust regex has no lookaround, so the patterns of `specifics` are rewritten without it
(the constants below): a lookbehind becomes a consumed preceding character, a lookahead
an optional trailing piece whose presence is checked after matching. Where the rewrite
could find other matches than `re` (a lookahead that `re` satisfies by backtracking:
`1,2345`, `12:30:4`, `1.5th`, `2024-03-055`), the turn is *set aside*, and so is every
turn with a character on which the two engines disagree (`\\w`, `\\s`, `\\d`,
`str.isalnum`, `str.lower`: combining marks, non-ASCII digits, ...; `_AGREED` lists the
characters scored here). The caller scores the turns set aside with the reference.
`tests/scorers/test_cases.py` and the property tests in `tests/scorers/test_groundedness.py`
check that both paths give the same columns.
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson
import polars as pl

from turnscore.scorers.specifics import _MONTH_PREFIXES, _MONTHS, COMMON_WORDS
from turnscore.scorers.text import normalize_expr

# Characters on which Python `re` and str methods and the Rust regex engine agree (`\w`,
# `\s`, `\d`, `str.isalnum`, `str.isspace`, `str.lower`, checked one by one over these
# ranges by a test): ASCII but for NUL (the span marker below) and U+001C-U+001F, Latin,
# Greek but for the sigmas (lowercased by context), Cyrillic, punctuation, currency,
# symbols, emoji. Non-ASCII digits, combining marks and joiners are not in it.
_AGREED = (
    r"\x01-\x1b\x20-\x7e\xa0-\xb1\xb4-\xb8\xba-\xbb\xbf-\u024f\u0370-\u03a2\u03a4-\u03c1"
    r"\u03c3-\u0482\u048a-\u04ff\u1e00-\u1eff\u2000-\u200b\u200e-\u203e\u2041-\u2053"
    r"\u2055-\u206f\u20a0-\u20bf\u2100-\u214f\u2160-\u2188\u218a-\u23ff\u249c-\u24b5"
    r"\u2500-\u2775\u2794-\u27bf\U0001f300-\U0001faff"
)
_DISAGREED = f"[^{_AGREED}]"

_MONTH = f"(?:{'|'.join(_MONTH_PREFIXES)})"
_ORD = "(?:st|nd|rd|th)"
_CONNECTORS = ("of", "de", "la", "van", "von", "der", "da", "di", "du")
_CONNECTOR = f"(?:{'|'.join(_CONNECTORS)})"

# The patterns of `specifics`, rewritten for Rust regex, in extraction order (the level).
_LIST_MARKER = r"(?m)^[ \t]*\d+[.)]\s"  # + the whitespace of `(?=\s)`: not in the span
_HEADING = r"(?m)^[ \t]*#+ .*$"
_URL = r"https?://[^\s<>\"'`)\]]+"
_EMAIL = r"(?:^|[^\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # + the character of `(?<!...)`
_QUOTED = "\"[^\"\\n]{1,80}\"|“[^”\\n]{1,80}”|`[^`\\n]{1,80}`"
_ISO_DATE = r"\b\d{4}-\d{1,2}-\d{1,2}\d?"  # a third day digit: `(?!\d)` fails
_MDY = rf"\b{_MONTH}[a-z]* \d{{1,2}}{_ORD}?\b(?:,? \d{{4}}\b)?"
_DMY = rf"\b\d\d?{_ORD}? (?:{_MONTH}|Sept)[a-z]*(?:,? \d{{4}}\b)?"
_TIME = r"(?:^|[^\d:])\d\d?:\d{2}(?::\d{2})?[\d:]?"  # a trailing [\d:]: `(?![\d:])` fails
_CODE = r"\b[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*\b"
_GROUPED = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?\d?"  # a digit after the last group: `(?!\d)` fails
_NUMBER = rf"(?:^|[^\w.,])(?:{_GROUPED}|\d+(?:\.\d+)?(?:{_ORD}\b)?)|,{_GROUPED}"
# A name run, and what tells whether it starts a sentence: a sentence's end and openers
# in front (taken when no earlier match took them) and a colon behind (`_name`'s).
_SENTENCE_END = r"[.!?:;\n]"
_OPENER = r"[ \t*_#>\-\"“(\[]"
_NAME_RUN = (rf"(?:^|{_SENTENCE_END})?{_OPENER}*"
             rf"[A-Z][\w'’-]*(?:[ \t]+(?:{_CONNECTOR}[ \t]+)?[A-Z][\w'’-]*)*:?")
_SOURCE_NUMBER = rf"{_GROUPED}|\d+(?:\.\d+)?"
_DIGIT_WORD = r"\S*\d\S*"

# For the patterns that rarely match, a cheap test that holds in every text where the
# pattern can match: the pattern then runs on those texts only. (`str.contains_any` costs
# more than these.)
_t = pl.col("t")
_NEEDS = {
    _LIST_MARKER: _t.str.contains("\n", literal=True) | _t.str.contains(r"^[ \t]*\d"),
    _HEADING: _t.str.contains("#", literal=True),
    _URL: _t.str.contains("http", literal=True),
    _EMAIL: _t.str.contains("@", literal=True),
    _QUOTED: _t.str.contains("[\"“`]"),
    _ISO_DATE: _t.str.contains(r"\d{4}-\d"),
    _MDY: _t.str.contains(rf"{_MONTH}[a-z]* \d"),
    _DMY: _t.str.contains(rf"\d{_ORD}? {_MONTH}"),
    _TIME: _t.str.contains(":", literal=True),
    _CODE: _t.str.contains("[A-Za-z]"),  # on words (`_codes`): most are digits only
}

_ISO_PARTS = r"^(\d{4})-(\d{1,2})-(\d{1,2})$"
_MDY_PARTS = rf"^([A-Za-z]+) (\d{{1,2}}){_ORD}?(?:,? (\d{{4}}))?$"
_DMY_PARTS = rf"^(\d{{1,2}}){_ORD}? ([A-Za-z]+)(?:,? (\d{{4}}))?$"
_TIME_PARTS = r"^(\d\d?):(\d{2})(?::\d{2})?$"

LIST, HEADING, URL, EMAIL, QUOTED, ISO, MDY, DMY, TIME, CODE, NUMBER, NAME = range(12)

# Runs that are one common word with a usual lead-in, as matched: dropped before any
# other work on the runs (most runs are these: "The", ". It"); the others are checked
# word by word, the lead-in cut off.
_OPENINGS = ("", " ", "  ", "- ", "* ", "**", '"', "“", "(")
_COMMON_RUNS = pl.Series(sorted({
    lead + form
    for word in COMMON_WORDS for form in (word[0].upper() + word[1:], word.upper())
    for lead in (*_OPENINGS, *(end + o for end in ".!?:;\n" for o in _OPENINGS))}))
_COMMON = pl.Series(sorted(COMMON_WORDS))
# A capitalised common word after a sentence's end (". The ", "\nIf "): lower-cased
# before names are matched, so that most runs (a sentence's first word) never match:
# names cost the most here. The names are the same: such a word starts its run (a
# sentence's end is no run character) and is trimmed as a leading common word, so the
# rest of the run gives the same name, and is no lone word at a sentence start, as the
# whole run was not either (a word was dropped). But a connector after it ("The van
# Gogh") is no common word and stays in the name: texts with a connector between blanks
# (`_CONNECTOR_GAP`) are left as they are ("of" is common: it is trimmed too). An
# earlier specific that overlaps the word overlaps the rest of its run too (a quoted
# value, a heading) or the run is that word alone ("May 5"), so claims are settled
# alike. Same length in characters: spans keep their offsets.
# `tests/scorers/test_groundedness.py` compares with the reference.
_SENTENCE_OPENINGS = [f"{end}{word[0].upper()}{word[1:]} " for word in sorted(COMMON_WORDS)
                      for end in (". ", "\n")]
_CONNECTOR_GAP = (r"[ \t](?:"
                  + "|".join(c for c in _CONNECTORS if c not in COMMON_WORDS) + r")[ \t]")
_SENTENCE_OPENINGS_LOWER = [opening.lower() for opening in _SENTENCE_OPENINGS]

_CANDIDATE = {"row": pl.UInt32, "level": pl.Int8, "start": pl.Int64, "end": pl.Int64,
              "kind": pl.String, "text": pl.String, "yields": pl.Boolean, "y": pl.Int32,
              "mo": pl.Int32, "d": pl.Int32}


def score_batch(answers: pl.Series, requests: pl.Series, calls: pl.Series,
                ) -> tuple[pl.DataFrame, list[int]]:
    """The score columns (`base.SCORE_COLUMNS` plus `row`, the batch position) of the
    turns scored here, and the positions of the turns set aside for the reference."""
    frame = pl.DataFrame({"answer": answers, "request": requests, "calls": calls}
                         ).with_row_index("row")
    sources = _sources(frame)
    frame = frame.with_columns(source=sources["source"])
    # Set aside: characters the engines disagree on, in the answer or the sources; and a
    # missing request (the reference fails on it, and the runner then scores turn by turn).
    aside = pl.concat([_disagreed(frame), frame.filter(pl.col("request").is_null())["row"]])
    texts = frame.filter(pl.col("answer").is_not_null() & ~pl.col("row").is_in(aside.implode()))
    specifics, rejected = _specifics(texts.select("row", t="answer"))
    verdicts, rejected2 = _supported(specifics, texts.select("row", "source"))
    aside_rows = set(aside.to_list()) | set(rejected) | set(rejected2)
    scored = _assemble(frame.filter(~pl.col("row").is_in(list(aside_rows))),
                       sources, verdicts)
    return scored, sorted(aside_rows)


def _disagreed(frame: pl.DataFrame) -> pl.Series:
    """The rows with a character outside `_AGREED` in the answer or the sources (the class
    is only tried on the non-ASCII ones: it is slow to scan)."""
    texts = [pl.col("answer"), pl.col("source")]
    control = pl.any_horizontal(t.str.contains(r"[\x00\x1c-\x1f]") for t in texts)
    wide = pl.any_horizontal(t.str.len_bytes() != t.str.len_chars() for t in texts)
    rest = frame.filter(~control.fill_null(False) & wide.fill_null(False))
    other = pl.any_horizontal(t.str.contains(_DISAGREED) for t in texts)
    return pl.concat([frame.filter(control)["row"], rest.filter(other)["row"]])


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
    return frame.select("row", "request", texts=texts, uncaptured=uncaptured).select(
        "row",
        source=pl.when(outputs == 0).then(pl.col("request"))
        .otherwise(pl.col("request") + "\n" + pl.col("texts").list.join("\n")),
        outputs=outputs,
        uncaptured=pl.col("uncaptured").fill_null(0).cast(pl.Int64))


def _spans(texts: pl.DataFrame, pattern: str) -> pl.DataFrame:
    """Every match of `pattern` in column `t`, as (row, start, m): start in characters.

    One regex pass: each match is wrapped in NUL (no text scored here holds one), and
    splitting there gives the pieces between matches and the matches, alternately. A
    piece's offset is a running sum over all the pieces of the batch less the lengths of
    the texts before (no per-row window: it costs more than the regex). Exploding the
    pieces costs little: strings are views."""
    if pattern in _NEEDS:
        texts = texts.filter(_NEEDS[pattern])
    if texts.is_empty():
        return pl.DataFrame(schema={"row": pl.UInt32, "start": pl.Int64, "m": pl.String})
    count = pl.col("p").list.len().cast(pl.Int64)
    length = pl.col("p").str.len_chars().cast(pl.Int64)
    # Eager steps: as one lazy query this costs a fifth more.
    split = texts.select("row", p=pl.col("t").str.replace_all(pattern, "\x00${0}\x00")
                         .str.split("\x00"), n=pl.col("t").str.len_chars().cast(pl.Int64))
    split = split.filter(count > 1).with_columns(before=pl.col("n").cum_sum() - pl.col("n"),
                                                 first=count.cum_sum() - count)
    pieces = split.explode("p").with_columns(length=length)
    odd = (pl.int_range(pl.len(), dtype=pl.Int64) - pl.col("first")) % 2 == 1
    pieces = pieces.with_columns(end=pl.col("length").cum_sum() - pl.col("before"), odd=odd)
    return pieces.filter("odd").select("row", start=pl.col("end") - pl.col("length"), m="p")


def _candidates(spans: pl.DataFrame, level: int, kind: str | None,
                text: pl.Expr | None = None, yields: pl.Expr | bool = True,
                parts: tuple[pl.Expr, pl.Expr, pl.Expr] | None = None) -> pl.LazyFrame:
    """Spans (row, start, m) as claim candidates of `level`: `m` is the claimed span.
    Lazy: the candidates of all levels are made in one query with their concatenation."""
    y, mo, d = parts if parts is not None else (pl.lit(None),) * 3
    return spans.lazy().select(
        "row", level=pl.lit(level, pl.Int8), start="start",
        end=pl.col("start") + pl.col("m").str.len_chars().cast(pl.Int64),
        kind=pl.lit(kind, pl.String),
        text=(text if text is not None else pl.col("m")) if kind else pl.lit(None, pl.String),
        yields=pl.lit(yields) if isinstance(yields, bool) else yields,
        y=y.cast(pl.Int32), mo=mo.cast(pl.Int32), d=d.cast(pl.Int32),
    ).cast(_CANDIDATE)  # type: ignore[arg-type]


def _strip_first(spans: pl.DataFrame, keep: str) -> pl.DataFrame:
    """Drop the consumed character in front of a match (a lookbehind's), unless the match
    starts with a character of class `keep` (it then began at the text's start)."""
    consumed = ~pl.col("m").str.contains(f"^{keep}")
    return spans.with_columns(
        start=pl.col("start") + consumed.cast(pl.Int64),
        m=pl.when(consumed).then(pl.col("m").str.slice(1)).otherwise(pl.col("m")))


def _month(name: pl.Expr) -> pl.Expr:
    return name.str.to_lowercase().replace_strict(_MONTHS, default=None, return_dtype=pl.Int32)


def _words(texts: pl.DataFrame) -> pl.DataFrame:
    """The words (runs of non-space) that hold a digit, as spans: numbers, times, ISO
    dates and identifiers lie within one, and their patterns see the same context there
    (a space or the text's edge around), so they run on these short texts only."""
    return _spans(texts, _DIGIT_WORD)


def _within(words: pl.DataFrame, pattern: str) -> pl.DataFrame:
    """`_spans` of `pattern` in the texts that `words` (spans) are words of."""
    inner = _spans(words.select(row=pl.int_range(pl.len(), dtype=pl.UInt32), t="m"), pattern)
    at = inner["row"]
    return inner.select(row=words["row"].gather(at), start=words["start"].gather(at)
                        + pl.col("start"), m="m")


def _dates(texts: pl.DataFrame, words: pl.DataFrame | None = None,
           ) -> tuple[pl.DataFrame, pl.Series]:
    """Date spans of the three forms with (y, mo, d), only real dates, and the rows whose
    ISO dates need `re` (a third day digit)."""
    iso = _within(_words(texts) if words is None else words, _ISO_DATE)
    rejected = iso.filter(pl.col("m").str.contains(r"-\d{3}$"))["row"]
    g = pl.col("m").str.extract_groups(_ISO_PARTS)
    iso = iso.with_columns(y=g.struct[0].cast(pl.Int32), mo=g.struct[1].cast(pl.Int32),
                           d=g.struct[2].cast(pl.Int32), level=pl.lit(ISO, pl.Int8))
    mdy = _spans(texts, _MDY)
    g = pl.col("m").str.extract_groups(_MDY_PARTS)
    mdy = mdy.with_columns(y=g.struct[2].cast(pl.Int32), mo=_month(g.struct[0]),
                           d=g.struct[1].cast(pl.Int32), level=pl.lit(MDY, pl.Int8))
    dmy = _spans(texts, _DMY)
    g = pl.col("m").str.extract_groups(_DMY_PARTS)
    dmy = dmy.with_columns(y=g.struct[2].cast(pl.Int32), mo=_month(g.struct[1]),
                           d=g.struct[0].cast(pl.Int32), level=pl.lit(DMY, pl.Int8))
    real = (pl.col("mo").is_between(1, 12) & pl.col("d").is_between(1, 31))
    dates = pl.concat([iso, mdy, dmy], how="vertical_relaxed").filter(real)
    return dates, rejected


def _times(words: pl.DataFrame) -> tuple[pl.DataFrame, pl.Series]:
    """Time spans with (h, mi) as (mo, d) in `words` (`_words`), and the rows whose
    times need `re`."""
    times = _strip_first(_within(words, _TIME), r"\d")
    g = pl.col("m").str.extract_groups(_TIME_PARTS)
    times = times.with_columns(mo=g.struct[0].cast(pl.Int32), d=g.struct[1].cast(pl.Int32))
    return times.filter(pl.col("mo").is_not_null()), \
        times.filter(pl.col("mo").is_null())["row"]


def _specifics(texts: pl.DataFrame) -> tuple[pl.DataFrame, list[int]]:
    """The specifics of each answer (`t`), in extraction order, each once: (row, kind,
    text, y, mo, d); and the rows set aside."""
    rejected: list[pl.Series] = []
    cands = [
        _candidates(_spans(texts, _LIST_MARKER).with_columns(m=pl.col("m").str.slice(
            0, pl.col("m").str.len_chars() - 1)), LIST, None, yields=False),
        _candidates(_spans(texts, _HEADING), HEADING, None, yields=False),
        _candidates(_spans(texts, _URL), URL, "url",
                    text=pl.col("m").str.strip_chars_end(".,;:!?")),
        _candidates(_strip_first(_spans(texts, _EMAIL), r"[\w.+-]"), EMAIL, "identifier"),
    ]
    inner = pl.col("m").str.slice(1, pl.col("m").str.len_chars() - 2).str.strip_chars()
    cands.append(_candidates(_spans(texts, _QUOTED), QUOTED, "quoted", text=inner,
                             yields=inner.str.contains(r"[\pL\pN]")))
    words = _words(texts)
    dates, bad = _dates(texts, words)
    rejected.append(bad)
    for level in (ISO, MDY, DMY):
        cands.append(_candidates(dates.filter(pl.col("level") == level), level, "date",
                                 parts=(pl.col("y"), pl.col("mo"), pl.col("d"))))
    times, bad = _times(words)
    rejected.append(bad)
    cands.append(_candidates(times, TIME, "time"))
    cands.append(_candidates(_codes(words), CODE, "identifier"))
    numbers, bad = _numbers(words)
    rejected.append(bad)
    cands.append(_candidates(numbers, NUMBER, "number"))
    cands.append(_names(texts))
    claimed = _claim(pl.concat(cands).collect())
    specifics = (claimed.filter("yields").sort("row", "level", "start")
                 .unique(["row", "kind", "text"], keep="first", maintain_order=True)
                 .select("row", "kind", "text", "y", "mo", "d"))
    return specifics, pl.concat(rejected).unique().to_list()


def _codes(words: pl.DataFrame) -> pl.DataFrame:
    """Identifier spans: `_CODE` in `words` (a match and its lookahead lie within one run
    of word characters and hyphens, so within one word), where the lookahead
    `(?=[A-Za-z][\\w-]*\\d)` holds: a digit in the match or in the rest of its run. Where
    it fails, `re` finds no other match in the span either (the run has no digit after)."""
    inner = _spans(words.select(row=pl.int_range(pl.len(), dtype=pl.UInt32), t="m"), _CODE)
    at = inner["row"]
    inner = inner.with_columns(word=words["m"].gather(at), turn=words["row"].gather(at),
                               word_start=words["start"].gather(at))
    after = pl.col("word").str.slice(pl.col("start") + pl.col("m").str.len_chars())
    ahead = pl.col("m").str.contains(r"\d") | after.str.contains(r"^[\w-]*\d")
    return inner.filter(ahead).select(row="turn", start=pl.col("word_start") + pl.col("start"),
                                      m="m")


def _numbers(words: pl.DataFrame) -> tuple[pl.DataFrame, pl.Series]:
    """Number spans in `words`, and the rows whose numbers need `re`: a digit after a
    grouped number, an ordinal suffix after a decimal (`re` backtracks into a shorter
    match). An integer with an ordinal suffix is no number, as with `re`."""
    spans = _strip_first(_within(words, _NUMBER), r"\d")
    grouped_bad = pl.col("m").str.contains(",") & pl.col("m").str.contains(r",\d{4}$")
    ordinal = pl.col("m").str.contains("[a-z]$")
    rejected = spans.filter(grouped_bad | (ordinal & pl.col("m").str.contains(r"\.")))["row"]
    return spans.filter(~ordinal), rejected


def _names(texts: pl.DataFrame) -> pl.LazyFrame:
    """Name candidates: the runs that claim (`specifics._name` gives a name: common words
    trimmed, no colon behind, not a lone word that starts a sentence)."""
    common = _COMMON
    lowered = pl.col("t").str.replace_many(_SENTENCE_OPENINGS, _SENTENCE_OPENINGS_LOWER)
    runs = _spans(texts.with_columns(
        pl.when(pl.col("t").str.contains(_CONNECTOR_GAP)).then(pl.col("t"))
        .otherwise(lowered)), _NAME_RUN)
    # A match is the run with its lead-in (a sentence's end, openers): the run starts a
    # sentence when the lead-in has the end, or starts the text, or follows the run before
    # when that took a colon.
    same = pl.col("row") == pl.col("row").shift(1)
    after_colon = (same & pl.col("m").shift(1).str.ends_with(":")
                   & (pl.col("start") == pl.col("start").shift(1)
                      + pl.col("m").shift(1).str.len_chars().cast(pl.Int64)))
    lead = pl.col("m").str.extract(rf"^({_SENTENCE_END}?{_OPENER}*)").str.len_chars()
    runs = runs.with_columns(opens=after_colon.fill_null(False)).filter(
        ~pl.col("m").is_in(_COMMON_RUNS.implode()) & ~pl.col("m").str.ends_with(":"))
    runs = runs.with_columns(lead=lead.cast(pl.Int64)).with_columns(
        m=pl.when(pl.col("lead") > 0).then(pl.col("m").str.slice(pl.col("lead")))
        .otherwise(pl.col("m")),
        start=pl.col("start") + pl.col("lead"),
        opens=pl.col("opens") | (pl.col("start") == 0)
        | pl.col("m").str.contains(f"^{_SENTENCE_END}"))
    runs = runs.filter(~pl.col("m").str.to_lowercase().is_in(common.implode()))
    possessive = r"(?:'s|’s)$"
    several = pl.col("m").str.contains(r"[ \t]")
    # One word (most runs): the name is the word without a possessive, unless common.
    one = runs.filter(~several).with_columns(name=pl.col("m").str.replace(possessive, ""))
    one = one.filter(~pl.col("name").str.to_lowercase().is_in(common.implode())).select(
        "row", "start", "m", "name", lone="opens")
    # Several words: common words are trimmed at both ends.
    many = runs.filter(several).with_row_index("cid")
    words = pl.col("m").str.replace_all(r"[ \t]+", " ").str.split(" ")
    tokens = (many.select("cid", tok=words)
              .explode("tok")
              .with_columns(tok=pl.col("tok").str.replace(possessive, ""))
              .with_columns(nc=~pl.col("tok").str.to_lowercase().is_in(common.implode())))
    # Per run, whether a token is at or after its first uncommon one and at or before its
    # last: running counts over the batch less the count before the run (no windows).
    cid = pl.col("cid")
    seen = pl.col("nc").cast(pl.Int64).cum_sum()
    before = pl.when((cid != cid.shift(1)).fill_null(True)).then(
        seen - pl.col("nc").cast(pl.Int64))
    total = pl.when((cid != cid.shift(-1)).fill_null(True)).then(seen)
    tokens = tokens.with_columns(
        after_first=seen - before.fill_null(strategy="forward") > 0,
        before_last=total.fill_null(strategy="backward") - seen + pl.col("nc").cast(pl.Int64)
        > 0)
    named = tokens.group_by("cid", maintain_order=True).agg(
        name=pl.col("tok").filter(pl.col("after_first") & pl.col("before_last")).str.join(" "),
        dropped=(~pl.col("after_first")).sum(),
        kept=(pl.col("after_first") & pl.col("before_last")).sum())
    many = many.join(named, on="cid").filter(pl.col("kept") > 0).select(
        "row", "start", "m", "name",
        lone=pl.col("opens") & (pl.col("dropped") == 0) & (pl.col("kept") == 1))
    # A lone word that starts a sentence is just capitalised.
    names = pl.concat([one, many]).filter((pl.col("name").str.len_chars() >= 2)
                                          & ~pl.col("lone"))
    return _candidates(names, NAME, "name", text=pl.col("name"))


def _claim(cands: pl.DataFrame) -> pl.DataFrame:
    """The candidates that claim their span: a candidate that overlaps none is claimed;
    the overlapping ones are settled level by level, as `extract_specifics` does."""
    # Sorted by (row, start): a candidate clashes with one before it when it starts
    # before the furthest end so far in its row, with the next when that starts before
    # its end. Running maxima over `row * 2**32 + end` stay within a row (no windows).
    key = pl.col("row").cast(pl.Int64) * (1 << 32)
    row = pl.col("row")
    reach = (key + pl.col("end")).cum_max() - key
    clash = (((row == row.shift(1)) & (pl.col("start") < reach.shift(1)))
             | ((row == row.shift(-1)) & (pl.col("end") > pl.col("start").shift(-1))))
    cands = cands.sort("row", "start").with_columns(clash=clash.fill_null(False))
    free = cands.filter(~pl.col("clash")).drop("clash")
    contested = cands.filter("clash").drop("clash")
    if contested.is_empty():
        return free
    contested = contested.with_columns(first=key + pl.col("start"),
                                       last=key + pl.col("end") - 1)
    claimed = contested.clear()
    for level in contested["level"].unique().sort().to_list():
        at = contested.filter(pl.col("level") == level).sort("last")
        if not claimed.is_empty():
            hit = at.join_asof(claimed.select("first", taken_end="end", taken_row="row")
                               .sort("first"), left_on="last", right_on="first",
                               strategy="backward")
            overlaps = ((pl.col("taken_row") == pl.col("row"))
                        & (pl.col("taken_end") > pl.col("start"))).fill_null(False)
            at = hit.filter(~overlaps).drop("first_right", "taken_end", "taken_row",
                                            strict=False)
        claimed = pl.concat([claimed, at.select(claimed.columns)])
    return pl.concat([free, claimed.drop("first", "last")])


def _supported(specifics: pl.DataFrame, sources: pl.DataFrame,
               ) -> tuple[pl.DataFrame, list[int]]:
    """Each specific with `ok`, whether a source supports it (`_Sources.supports`)."""
    rejected: list[int] = []
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
        found = (rows.select("row", n=pl.col("source").str.extract_all(_SOURCE_NUMBER))
                 .explode("n"))
        found = found.filter(pl.col("n").is_not_null())
        rejected += found.filter(pl.col("n").str.contains(r",\d{4}$"))["row"].to_list()
        # The same text (most numbers), else the same value, else a rounding.
        same = numbers.join(found.select("row", text="n"), on=["row", "text"], how="semi")
        rest = numbers.join(same, on="sid", how="anti")
        values = (found.join(rest.select("row").unique(), on="row", how="semi")
                  .select("row", v=_canonical(pl.col("n"))).unique())
        rest = rest.with_columns(v=_canonical(pl.col("text")))
        by_value = rest.join(values, on=["row", "v"], how="semi")
        rest = rest.join(by_value, on="sid", how="anti")
        ok = pl.concat([ok, same.select("sid"), by_value.select("sid"), _rounded(rest)])
    pending = spec.filter(~pl.col("verbatim") & (pl.col("kind") != "number"))
    dates = pending.filter(pl.col("kind") == "date")
    if not dates.is_empty():
        rows = dates.select("row").unique().join(sources, on="row").select("row", t="source")
        found, bad = _dates(rows)
        rejected += bad.to_list()
        found = found.select("row", "y", "mo", "d").unique()
        exact = dates.filter(pl.col("y").is_not_null()).join(found, on=["row", "y", "mo", "d"],
                                                             how="semi")
        day = dates.join(found.select("row", "mo", "d").unique(), on=["row", "mo", "d"],
                         how="semi").filter(pl.col("y").is_null())
        ok = pl.concat([ok, exact.select("sid"), day.select("sid")])
    times = pending.filter(pl.col("kind") == "time")
    if not times.is_empty():
        rows = times.select("row").unique().join(sources, on="row").select("row", t="source")
        found, bad = _times(_words(rows))
        rejected += bad.to_list()
        g = pl.col("text").str.extract_groups(_TIME_PARTS)
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
    return verdicts, rejected


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


def _rounded(numbers: pl.DataFrame) -> pl.DataFrame:
    """The numbers (sid, source, text) that round a finer source value (rare: the rest
    are not in the source at all), settled by the reference."""
    from turnscore.scorers.groundedness import _Sources  # a cycle at import time

    sid = [s for s, source, text in numbers.select("sid", "source", "text").iter_rows()
           if _Sources(source, frozenset())._number(text)]
    return pl.DataFrame({"sid": sid}, schema={"sid": pl.UInt32})


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


def merge(scored: pl.DataFrame, aside: Sequence[int], reference: pl.DataFrame) -> pl.DataFrame:
    """The batch's score columns, in batch order: `scored` (with `row`) and `reference`,
    the reference's scores of the rows `aside`."""
    back = reference.with_columns(row=pl.Series(list(aside), dtype=pl.UInt32))
    return pl.concat([scored, back.select(scored.columns)]).sort("row").drop("row")
