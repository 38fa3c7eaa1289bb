"""Specifics: the checkable tokens of answers (numbers, dates, names, quoted values, URLs...).

The groundedness scorer extracts them from final answers and looks for each in the
sources. Each span of an answer is counted once, in this order (the *level*):

- list markers (`1.` at a line start) and markdown headings: claimed, never specifics;
- URLs and e-mail addresses;
- quoted values ("...", “...”, `...`), taken as a whole;
- dates: ISO (`2024-03-05`) and written (`March 5, 2024`, `5 March`), parsed to
  (year or None, month, day); a match that is not a real date is skipped;
- times (`9:30`) and identifiers mixing letters and digits (`ORD-1234`);
- numbers (`1,000`, `18.34`); signs are not part of a number; ordinals (`3rd`) are not
  specifics;
- proper names: runs of capitalised words, minus leading and trailing common words
  ("The", "In", weekdays, months...). A lone capitalised word that starts a sentence is
  not taken as a name (it is just capitalised); a run of two or more is ("New York
  is..."). Labels followed by a colon are skipped.

One implementation, over a whole batch at once with polars: the Rust regex engine behind
it finds every pattern's matches in every answer, one expression per pattern, as (row,
start, text) spans (`_spans`); the claims are settled on those spans (`_claim`). Rust
regex has no lookaround, so where a pattern needs one it is written without: a
lookbehind becomes a consumed preceding character (cut off again, `_strip_first`), a
lookahead an optional trailing piece whose presence is checked after matching, and the
match then taken as a backtracking engine would take it (`1,2345` is the number `1`,
`1.5th` the number `1`; `12:30:4` and `2024-03-055` are no time and no date). Character
classes are Unicode, as Rust regex has them (`\\w`, `\\d`, `\\s`, case).

(Over ~400 lines: the patterns, their rewrites without lookaround and the claim rules
they feed are one piece; split, each pattern's rewrite would sit apart from its claim.)
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

_MONTHS = {m: i + 1 for i, m in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"))}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH_PREFIXES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                   "Dec")
_MONTH_PREFIXES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                   "Dec")

COMMON_WORDS = frozenset({
    "a", "an", "the", "this", "that", "these", "those", "it", "its", "i", "we", "you", "he",
    "she", "they", "my", "our", "your", "their", "his", "her", "me", "us", "in", "on", "at",
    "for", "from", "to", "with", "by", "of", "and", "but", "or", "if", "when", "while", "as",
    "so", "yes", "no", "not", "here", "there", "today", "tomorrow", "yesterday", "please",
    "note", "sure", "hello", "hi", "hey", "thanks", "thank", "unfortunately", "however",
    "also", "currently", "based", "according", "let", "what", "which", "who", "where", "how",
    "why", "is", "are", "was", "were", "will", "would", "can", "could", "should", "do", "does",
    "did", "all", "some", "any", "each", "every", "one", "two", "three", "first", "next",
    "then", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "ok", "okay", "celsius", "fahrenheit", "utc", "gmt",
    "am", "pm", "summary", "answer", "result", "results",
})


_MONTH = f"(?:{'|'.join(_MONTH_PREFIXES)})"
_ORD = "(?:st|nd|rd|th)"
_CONNECTORS = ("of", "de", "la", "van", "von", "der", "da", "di", "du")
_CONNECTOR = f"(?:{'|'.join(_CONNECTORS)})"

# The patterns, in extraction order (the level).
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
SOURCE_NUMBER = rf"{_GROUPED}|\d+(?:\.\d+)?"
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
TIME_PARTS = r"^(\d\d?):(\d{2})(?::\d{2})?$"

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
_SENTENCE_OPENINGS = [f"{end}{word[0].upper()}{word[1:]} " for word in sorted(COMMON_WORDS)
                      for end in (". ", "\n")]
_CONNECTOR_GAP = (r"[ \t](?:"
                  + "|".join(c for c in _CONNECTORS if c not in COMMON_WORDS) + r")[ \t]")
_SENTENCE_OPENINGS_LOWER = [opening.lower() for opening in _SENTENCE_OPENINGS]

_CANDIDATE = {"row": pl.UInt32, "level": pl.Int8, "start": pl.Int64, "end": pl.Int64,
              "kind": pl.String, "text": pl.String, "yields": pl.Boolean, "y": pl.Int32,
              "mo": pl.Int32, "d": pl.Int32}



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


def words_of(texts: pl.DataFrame) -> pl.DataFrame:
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


def dates_in(texts: pl.DataFrame, words: pl.DataFrame | None = None) -> pl.DataFrame:
    """Date spans of the three forms in column `t`, with (y, mo, d), only real dates. An
    ISO date with a third day digit is none (`(?!\\d)` after the day)."""
    iso = _within(words_of(texts) if words is None else words, _ISO_DATE)
    iso = iso.filter(~pl.col("m").str.contains(r"-\d{3}$"))
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
    return pl.concat([iso, mdy, dmy], how="vertical_relaxed").filter(real)


def times_in(words: pl.DataFrame) -> pl.DataFrame:
    """Time spans with (h, mi) as (mo, d) in `words` (`words_of`). A match followed by a
    digit or a colon is none (`(?![\\d:])`: no shorter match can end elsewhere)."""
    times = _strip_first(_within(words, _TIME), r"\d")
    g = pl.col("m").str.extract_groups(TIME_PARTS)
    times = times.with_columns(mo=g.struct[0].cast(pl.Int32), d=g.struct[1].cast(pl.Int32))
    return times.filter(pl.col("mo").is_not_null())


def extract(texts: pl.DataFrame) -> pl.DataFrame:
    """The specifics of each answer (column `t`, rows numbered by `row`), in extraction
    order, each once: (row, kind, text, y, mo, d)."""
    # NUL marks matches in `_spans`: read as U+FFFD (one character, offsets unchanged).
    texts = texts.with_columns(t=without_nul(pl.col("t")))
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
    words = words_of(texts)
    dates = dates_in(texts, words)
    for level in (ISO, MDY, DMY):
        cands.append(_candidates(dates.filter(pl.col("level") == level), level, "date",
                                 parts=(pl.col("y"), pl.col("mo"), pl.col("d"))))
    times = times_in(words)
    cands.append(_candidates(times, TIME, "time"))
    cands.append(_candidates(_codes(words), CODE, "identifier"))
    numbers = _numbers(words)
    cands.append(_candidates(numbers, NUMBER, "number"))
    cands.append(_names(texts))
    claimed = _claim(pl.concat(cands).collect())
    return (claimed.filter("yields").sort("row", "level", "start")
            .unique(["row", "kind", "text"], keep="first", maintain_order=True)
            .select("row", "kind", "text", "y", "mo", "d"))


def without_nul(text: pl.Expr) -> pl.Expr:
    """`text` with NUL (the match marker of `_spans`) read as U+FFFD: one character, so
    offsets do not move. Only texts that hold one are rewritten."""
    return (pl.when(text.str.contains("\x00", literal=True))
            .then(text.str.replace_all("\x00", "\ufffd", literal=True)).otherwise(text))


def specifics_of(answers: Sequence[str]) -> list[list[tuple[str, str]]]:
    """Per answer, its specifics as (kind, text), in extraction order."""
    texts = pl.DataFrame({"t": list(answers)}, schema={"t": pl.String}).with_row_index("row")
    out: list[list[tuple[str, str]]] = [[] for _ in answers]
    for row, kind, text in extract(texts).select("row", "kind", "text").iter_rows():
        out[row].append((kind, text))
    return out


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


def _numbers(words: pl.DataFrame) -> pl.DataFrame:
    """Number spans in `words`. Where a lookahead would fail the match, it is taken as a
    backtracking engine takes it: a digit after a grouped number (`1,2345`) gives up the
    last group (`1`); a decimal with an ordinal suffix (`1.5th`) its fraction (`1`). An
    integer with an ordinal suffix is no number."""
    m = pl.col("m")
    # After a comma only a grouped number may start (`,{_GROUPED}`): one that gives up
    # its only group is none.
    spans = _strip_first(_within(words, _NUMBER).with_columns(after_comma=m.str.starts_with(",")),
                         r"\d")
    grouped_bad = m.str.contains(",") & m.str.contains(r",\d{4}$")
    ordinal = m.str.contains("[a-z]$")
    decimal_ordinal = ordinal & m.str.contains(r"\.")
    spans = spans.filter(~ordinal | decimal_ordinal).with_columns(
        m=pl.when(grouped_bad).then(m.str.replace(r",\d{4}$", ""))
        .when(decimal_ordinal).then(m.str.extract(r"^(\d+)\.", 1)).otherwise(m))
    return spans.filter(~(pl.col("after_comma") & ~m.str.contains(","))).drop("after_comma")


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
    the overlapping ones are settled level by level, in level order."""
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


