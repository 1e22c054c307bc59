"""canary.cache.memo: the newest entries kept within their weight, the oldest dropped first."""

from __future__ import annotations

from canary.cache.memo import Memo


def test_the_oldest_entries_go_first_once_the_weight_is_over():
    memo: Memo[str, bytes] = Memo(10, lambda _key, data: len(data))
    memo.put("a", b"1234")
    memo.put("b", b"1234")
    assert memo.get("a") == b"1234"  # read: now the newest
    memo.put("c", b"1234")  # 12 > 10: the oldest, b, goes
    assert memo.get("b") is None
    assert memo.get("a") == b"1234" and memo.get("c") == b"1234"


def test_a_key_already_held_keeps_its_first_value_and_weight():
    memo: Memo[str, str] = Memo(3, lambda key, _value: len(key))
    memo.put("ab", "first")
    memo.put("ab", "second")
    assert memo.get("ab") == "first"
    memo.put("c", "x")  # 2 + 1 = 3: nothing over
    assert memo.get("ab") == "first" and memo.get("c") == "x"


def test_an_entry_heavier_than_the_whole_memo_is_not_kept():
    memo: Memo[str, bytes] = Memo(2, lambda _key, data: len(data))
    memo.put("big", b"12345")
    assert memo.get("big") is None


def test_made_makes_a_value_once_then_holds_it():
    memo: Memo[str, int] = Memo(10, lambda _key, _value: 1)
    made: list[str] = []

    def make() -> int:
        made.append("x")
        return len(made)

    assert memo.made("a", make) == 1
    assert memo.made("a", make) == 1
    assert made == ["x"]
