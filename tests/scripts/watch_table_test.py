#!/usr/bin/env python3
"""Checks scripts/watch_table.py on a hand-written results.json: the watched fraction is the mean over
every score context of every scenario (not the mean of the scenario means), "fewer" is its inverse,
non-learners get none, and the variant's loss lands in its own column; every expected value is worked
out by hand below.

Usage: python3 tests/scripts/watch_table_test.py   (exit 0 when every check passes)
"""
import unittest

import project_script  # tests/scripts/project_script.py, beside this file

watch_table = project_script.load("watch_table")


def pooled(policy, est, lo, hi):
    return {"policy": policy, "metrics": {"mean": {"estimate": est, "low": lo, "high": hi}}}


BASE = {
    "policies": [{"name": "AUTO", "spec": "auto"}, {"name": "U", "spec": "ucb1:c=0.05,n0=1@watch:full=4,floor=0.01"}],
    "pooled": [pooled("AUTO", 0.05, 0.04, 0.06), pooled("U", 0.002, 0.001, 0.003)],
    # U watched 0.1 and 0.3 of the calls of one scenario's two contexts and 0.5 of the other's one:
    # 0.3 over the contexts, where the mean of the scenario means would be (0.2 + 0.5) / 2 = 0.35.
    "scores": [{"policy": "AUTO", "watched": [1.0, 1.0]}, {"policy": "AUTO", "watched": [1.0]},
               {"policy": "U", "watched": [0.1, 0.3]}, {"policy": "U", "watched": [0.5]}],
    "hypotheses": [{"a": "U", "b": "AUTO", "family": "primary", "mean_diff": -0.048, "p": 0.0078125,
                    "p_holm": 0.0078125, "reject": True}],
}
VARIANT = {"pooled": [pooled("AUTO", 0.05, 0.04, 0.06), pooled("U", 0.001, 0.0, 0.002)]}


class WatchTable(unittest.TestCase):
    def test_rows(self):
        lines = watch_table.table(BASE, VARIANT).splitlines()
        self.assertEqual(len(lines), 4)
        # AUTO learns nothing: no watched fraction.
        self.assertEqual(lines[2], "| AUTO | 5.000 (4.000-6.000) | - | - | 5.000 |")
        # U: (0.1 + 0.3 + 0.5) / 3 = 0.3 of its calls, 1 / 0.3 = 3.3 times fewer.
        self.assertEqual(lines[3], "| U | 0.200 (0.100-0.300) | 30.000 | 3.3x | 0.100 |")

    def test_without_a_variant_the_last_column_is_empty(self):
        self.assertTrue(watch_table.table(BASE, None).splitlines()[3].endswith("| - |"))

    def test_tests(self):
        lines = watch_table.tests(BASE).splitlines()
        self.assertEqual(lines[2], "| U | AUTO | primary | -4.800 | 0.007812 | 0.007812 | yes |")


if __name__ == "__main__":
    unittest.main()
