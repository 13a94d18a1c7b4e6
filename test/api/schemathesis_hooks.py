"""Generators for the string formats pixflow's /openapi.json names, loaded by the fuzz test
(SCHEMATHESIS_HOOKS): what the document says in words, a fuzzer needs as a strategy."""

from datetime import date

import schemathesis
from hypothesis import strategies as st


def _with_check_digits(nine: list[int]) -> str:
    # Mod 11 over the digits so far, weighted from len+1 down to 2; a remainder below 2 gives 0.
    digits = list(nine)
    for _ in range(2):
        total = sum(d * w for d, w in zip(digits, range(len(digits) + 1, 1, -1)))
        digits.append(0 if total % 11 < 2 else 11 - total % 11)
    return "".join(map(str, digits))


# The format `cpf`: 11 digits with valid check digits, never one digit repeated.
cpfs = (
    st.lists(st.integers(0, 9), min_size=9, max_size=9)
    .filter(lambda d: len(set(d)) > 1)
    .map(_with_check_digits)
)
schemathesis.openapi.format("cpf", cpfs)

# The document's one `date` is a birthday: from 1900-01-01 to today, as its description says.
schemathesis.openapi.format(
    "date",
    st.dates(min_value=date(1900, 1, 1), max_value=date.today()).map(date.isoformat),
)

# The format `pix-account-key`: `key;ispb;branch;account;type`, its key part a Pix key itself.
schemathesis.openapi.format(
    "pix-account-key",
    st.tuples(
        st.one_of(
            cpfs,
            st.from_regex(r"\A[a-z0-9]{1,20}@[a-z0-9]{1,20}\.com\Z"),
            st.from_regex(r"\A\+55[1-9][1-9]\d{8,9}\Z"),
            st.uuids().map(str),
        ),
        st.from_regex(r"\A\d{8}\Z"),
        st.from_regex(r"\A\d{1,5}\Z"),
        st.from_regex(r"\A\d{1,20}\Z"),
        st.sampled_from(["CACC", "SVGS", "TRAN"]),
    ).map(";".join),
)

# The format `webhook-url`: an https URL to a public host (names under example.com; nothing is
# sent to them: the fuzz test's API runs no events relay).
schemathesis.openapi.format(
    "webhook-url",
    st.from_regex(r"\Ahttps://[a-z][a-z0-9-]{0,20}\.example\.com/[a-z0-9/]{0,30}\Z"),
)
