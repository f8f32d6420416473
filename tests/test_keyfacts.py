"""Key-fact answer scoring on a case whose expected answers are sentences, and property tests of normalization."""
import datetime as dt
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from casebook.loader import load_case
from core.values import amounts, dates, numbers, times
from lab import metrics
from lab.keyfacts import split_key_facts

CASE = load_case(Path(__file__).parent / "cases" / "sentence_answers")
Q = {q.id: q for q in CASE.questions}

# (question, answer, correct?) written as a model would: paraphrased, reordered, other formats.
ANSWERS = [
    ("S1", "He saw the van at about 20:40. His dog's name is Biscuit [W1].", True),
    ("S1", "He saw the van at 8:40 pm; the dog is called Biscuit.", True),
    ("S1", "He saw the van at about 20:40 [W1].", False),                          # the dog's name is missing
    ("S2", "The insured value of the clock is €12,500 [W2].", True),
    ("S2", "It was insured for 12,500 euros.", True),
    ("S2", "It was insured for EUR 12,000.", False),
    ("S3", "The alarm came in at 01:12 on Thursday 4 May 2023. Officers arrived at 01:30.", True),
    ("S3", "The alarm was raised at 1:12 am on 4/5/2023 and the officers arrived at 1:30 am.", True),
    ("S3", "The alarm was raised at 01:12 on May 4, 2023.", False),                # the arrival time is missing
    ("S4", "Lindqvist bought it on March 12, 2019 for 9,800 pounds.", True),       # surname alone, other formats
    ("S4", "Ada Lindqvist bought it in 2019 for £9,800.", False),                  # no day: a different date
    ("S5", "The clock was covered by Halden Mutual [W2].", True),                  # the explicit key_facts list
    ("S5", "An insurer covered it.", False),
]


@pytest.mark.parametrize("qid,answer,correct", ANSWERS)
def test_sentence_answers_are_scored_by_their_facts(qid, answer, correct):
    q = Q[qid]
    scores = metrics.answer_scores(answer, q.expected_answer, q.answers, q.text, q.key_facts)
    assert scores.correct is correct, scores.key_facts
    assert not scores.strict_correct          # the old whole-string measure calls every one of these wrong
    assert bool(scores.key_facts.missing) is not correct


def test_parenthesised_parts_are_optional_and_facts_of_the_question_do_not_count():
    facts = split_key_facts(Q["S2"].expected_answer, Q["S2"].text)
    assert [(f.kind, f.optional) for f in facts] == [("amount", False), ("code", True), ("word", True)]
    where = split_key_facts("Mr. Blackwood was at the charity gala downtown.", "Where was Mr. Blackwood?")
    assert [f.value for f in where] == ["charity", "gala", "downtown"]   # naming him answers nothing


def test_no_answer_is_counted_apart():
    q = Q["S4"]
    scores = metrics.answer_scores("I cannot tell from these passages.", q.expected_answer, q.answers, q.text)
    assert scores.no_answer and not scores.correct
    wrong = metrics.answer_scores("Someone bought it in 2018.", q.expected_answer, q.answers, q.text)
    assert not wrong.no_answer and not wrong.correct


def test_a_share_below_one_accepts_most_facts():
    q = Q["S3"]
    partial = "The alarm was raised at 01:12 on May 4, 2023."
    assert not metrics.answer_scores(partial, q.expected_answer, q.answers, q.text).correct
    assert metrics.answer_scores(partial, q.expected_answer, q.answers, q.text, share=0.6).correct


MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


@given(st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2099, 12, 31)))
def test_date_formats_normalize_alike(d):
    month = MONTHS[d.month - 1]
    forms = [f"{d.day} {month} {d.year}", f"{month} {d.day}, {d.year}", f"{d.day}/{d.month}/{d.year}",
             d.isoformat(), f"{d.day}th of {month[:3]} {d.year}"]
    assert {dates(f"on {form} it rained")[0][1] for form in forms} == {d.isoformat()}


@given(st.integers(min_value=1, max_value=99_999_999))
def test_amount_formats_normalize_alike(value):
    grouped = f"{value:,}"
    forms = [f"EUR {grouped}", f"€{grouped}", f"{grouped} euros", f"€ {value}"]
    assert {amounts(f"it cost {form} then")[0][1] for form in forms} == {f"EUR {value}"}


@given(st.integers(min_value=0, max_value=23), st.integers(min_value=0, max_value=59))
def test_twelve_and_twenty_four_hour_times_normalize_alike(hour, minute):
    twelve = f"{hour % 12 or 12}:{minute:02d} {'pm' if hour >= 12 else 'am'}"
    assert times(f"at {hour:02d}:{minute:02d}")[0][1] == times(f"at {twelve}")[0][1] == f"{hour:02d}:{minute:02d}"


@given(st.integers(min_value=0, max_value=20))
def test_number_words_equal_digits(n):
    words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
             "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]
    assert numbers(f"{words[n]} officers")[0][1] == numbers(f"{n} officers")[0][1] == str(n)
