#!/usr/bin/env python3
"""Checks scripts/knob_gain.py on a hand-written knob sweep: NCCL's default arm, each knob's gain,
the knob headroom and the size bands, every expected value worked out by hand below.

Usage: python3 tests/scripts/knob_gain_test.py   (exit 0 when every check passes)
"""
import os
import tempfile
import unittest

import project_script  # tests/scripts/project_script.py, beside this file

knob_gain = project_script.load("knob_gain")

HEADER = "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,channels,chunk_bytes,sample,time_us,prior_us\n"


def rows(bytes_, arms):
    """arms: (algo, proto, channels, chunk, [samples], prior)"""
    out = ""
    for algo, proto, ch, chunk, samples, prior in arms:
        for i, t in enumerate(samples):
            out += f"f,AllReduce,2,8,{bytes_},{algo},{proto},{ch},{chunk},{i},{t},{prior}\n"
    return out


# One context of 8 MiB. NCCL's default: the smallest prior at NCCL's knobs, Ring/Simple and
# Tree/Simple tie at 10 and Tree (algorithm 0) comes first, so Tree/Simple (mean 12) is the default.
# Tree/Simple at 8 channels: mean 10 -> channels gain 12/10 - 1 = 0.2; at chunk 512K: mean 11 ->
# chunk gain 12/11 - 1; at 8 channels and 512K: mean 8 -> both 12/8 - 1 = 0.5; Ring/Simple at 4
# channels: mean 6 -> any arm 12/6 - 1 = 1.0. The best arm at NCCL's knobs is Ring/Simple (9): the
# headroom is 9/6 - 1 = 0.5.
CONTEXT = rows(8 << 20, [
    ("Tree", "Simple", 0, 0, [11, 13], 10),
    ("Tree", "Simple", 8, 0, [10, 10], 10),
    ("Tree", "Simple", 0, 524288, [11, 11], 10),
    ("Tree", "Simple", 8, 524288, [7, 9], 10),
    ("Ring", "Simple", 0, 0, [9, 9], 10),
    ("Ring", "Simple", 4, 0, [6, 6], 10),
])


class KnobGain(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "k.csv")
        with open(self.path, "w") as f:
            f.write(HEADER + CONTEXT + rows(1024, [("Ring", "LL", 0, 0, [5, 5], 3), ("Ring", "LL", 2, 0, [5, 5], 3)]))

    def tearDown(self):
        self.dir.cleanup()

    def test_gains_per_knob_and_headroom(self):
        sweep = knob_gain.read_sweep(self.path)
        arms = sweep[("f", "AllReduce", 2, 8, 8 << 20)]
        self.assertEqual(knob_gain.default_arm(arms), ("Tree", "Simple", 0, 0))
        g = knob_gain.gains(arms)
        self.assertAlmostEqual(g["channels"], 0.2)
        self.assertAlmostEqual(g["chunk"], 12 / 11 - 1)
        self.assertAlmostEqual(g["both"], 0.5)
        self.assertAlmostEqual(g["any arm"], 1.0)
        self.assertAlmostEqual(knob_gain.headroom(arms), 0.5)

    def test_bands_take_each_context_by_its_size(self):
        per_context, bands, room = knob_gain.summarise(self.path)
        self.assertEqual(len(per_context), 2)
        self.assertEqual(bands["< 64 KiB"]["both"]["max"], 0.0)  # 1 KiB: 5 against 5
        self.assertAlmostEqual(bands["4 - 128 MiB"]["both"]["median"], 0.5)
        self.assertNotIn("> 128 MiB", bands)
        self.assertAlmostEqual(room["mean"], 0.25)  # (0.5 + 0) / 2
        self.assertAlmostEqual(room["max"], 0.5)


if __name__ == "__main__":
    unittest.main()
