"""Datasets: validation (one-line errors), exact rationals, JSON round trip, atomic writes."""

import json
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given

from attnsvm.attention.data import Dataset, dataset_from_json, load_dataset
from attnsvm.claims.strategies import integer_datasets
from attnsvm.errors import DatasetError, UserError
from attnsvm.files import write_json_atomic

GOOD = {"X": [[[1, 0], [0, "1/3"]]], "Y": [1], "v": [1, "-3/7"]}


def test_rational_strings_are_exact():
    ds = dataset_from_json(GOOD)
    assert ds.exact["v"][1] == Fraction(-3, 7)
    assert ds.exact["X"][0, 1, 1] == Fraction(1, 3)
    assert ds.v[1] == pytest.approx(-3 / 7)
    assert np.array_equal(ds.W, np.eye(2))


@given(integer_datasets(W="integer"))
def test_json_round_trip_is_exact(ds):
    back = dataset_from_json(json.loads(json.dumps(ds.to_json())))
    for k in ("X", "Y", "v", "W"):
        assert np.array_equal(back.exact[k], ds.exact[k])


def test_floats_round_trip_exactly():
    ds = Dataset.from_arrays(np.random.default_rng(1).normal(size=(2, 3, 2)), [1, -1], [0.1, 0.7])
    back = dataset_from_json(json.loads(json.dumps(ds.to_json())))
    assert np.array_equal(back.X, ds.X) and np.array_equal(back.v, ds.v)


@pytest.mark.parametrize("change, message", [
    ({"Y": [0]}, "labels must be -1 or +1"),
    ({"Y": [1, 1]}, "expected 1 labels"),
    ({"X": [[[1, 0]]]}, "T >= 2"),
    ({"X": [[[1, 0], [0]]]}, "ragged"),
    ({"X": [[1, 0], [0, 1]]}, "3-D"),
    ({"X": [[[1, "nan"], [0, 0]]]}, "non-finite"),
    ({"v": [1, float("inf")]}, "non-finite"),
    ({"v": [1, 2, 3]}, "length d = 2"),
    ({"v": [1, "abc"]}, "not a number"),
    ({"W": [[1, 0]]}, "shape (2, 2)"),
    ({"u": [0, 0]}, "nonzero"),
    ({"z": [[1, 0, 0]]}, "shape (1, 2)"),
    ({"extra": 1}, "unknown key"),
    ({"Y": [True]}, "boolean"),
])
def test_invalid_datasets_give_one_line_errors(change, message):
    with pytest.raises(DatasetError) as e:
        dataset_from_json({**GOOD, **change})
    assert message in str(e.value) and "\n" not in str(e.value)


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        load_dataset(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"X": [')
    with pytest.raises(UserError, match="malformed JSON"):
        load_dataset(bad)
    arr = tmp_path / "arr.json"
    arr.write_text("[1, 2]")
    with pytest.raises(UserError, match="JSON object"):
        load_dataset(arr)


def test_atomic_write_leaves_old_file_on_failure(tmp_path):
    target = tmp_path / "out.json"
    write_json_atomic(target, {"a": 1})
    with pytest.raises(TypeError):
        write_json_atomic(target, {"a": object()})
    assert json.loads(target.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
