#!/usr/bin/env python3
"""Checks scripts/bench_all.py's rows on hand-written benchmark outputs, and that the README's
performance table is the one that script prints (its machine line and its rows, in its order).

Usage: python3 tests/scripts/bench_all_test.py   (exit 0 when every check passes)
"""
import argparse
import os
import subprocess
import sys
import tempfile
import unittest

import project_script  # tests/scripts/project_script.py, beside this file

ROOT = project_script.ROOT
bench_all = project_script.load("bench_all")


def overhead(mode, policy, feedback, ns):
    return {"mode": mode, "policy": policy, "feedback": feedback, "ns_per_call_median": ns}


def delay(case, ranks, in_flight, median, p90):
    return {"case": case, "ranks": ranks, "in_flight": in_flight, "median": median, "p90": p90}


class Rows(unittest.TestCase):
    def test_rates_are_written_with_one_decimal_and_a_power_of_ten(self):
        self.assertEqual(bench_all.sci(47339500.7), "4.7×10⁷")
        self.assertEqual(bench_all.sci(9.96e6), "1.0×10⁷")  # rounds up into the next power
        self.assertEqual(bench_all.sci(100165.9), "1.0×10⁵")
        self.assertEqual(bench_all.sci(3.5), "3.5×10⁰")

    def test_replay_row_takes_each_policy_by_its_name_not_its_position(self):
        doc = {"results": [{"policy": "thompson:n0=1,sigma=0.1", "steps_per_s": 2.04e7},
                           {"policy": "ucb1:c=0.1,n0=1", "steps_per_s": 5.16e7}]}
        self.assertEqual(bench_all.replay_row(doc)[1], "UCB1 5.2×10⁷, Thompson 2.0×10⁷ steps/s")
        knobs = {"results": [{"policy": "osub:c=0.1,n0=1", "steps_per_s": 7.2e6},
                             {"policy": "ucb1:c=0.1,n0=1", "steps_per_s": 6.7e6}]}
        self.assertTrue(bench_all.replay_row(knobs, 512)[0].startswith("CPU replay, 512 knob arms, 1 thread"))
        self.assertEqual(bench_all.replay_row(knobs, 512)[1], "UCB1 6.7×10⁶, OSUB 7.2×10⁶ steps/s")

    def test_each_row_says_its_goal_and_by_how_much_it_falls_short(self):
        doc = {"results": [{"policy": "thompson:n0=1,sigma=0.1", "steps_per_s": 2.0e7},
                           {"policy": "ucb1:c=0.1,n0=1", "steps_per_s": 5.0e7}]}
        what, result, goal, verdict = bench_all.replay_row(doc)
        self.assertEqual(goal, "UCB1 ≥ 1.0×10⁸, Thompson ≥ 4.0×10⁷")
        self.assertEqual(verdict, "short: UCB1 2.0× short, Thompson 2.0× short")  # 1e8 / 5e7, 4e7 / 2e7
        knobs = {"results": [{"policy": "osub:c=0.1,n0=1", "steps_per_s": 2.5e7},
                             {"policy": "ucb1:c=0.1,n0=1", "steps_per_s": 6.0e6}]}
        self.assertEqual(bench_all.replay_row(knobs, 512)[2:], ("UCB1 ≥ 5.0×10⁶, OSUB ≥ 2.0×10⁷", "met"))
        cells = [{"case": "bootstrap_mean_percentile", "speedup_wall": 45.0},
                 {"case": "bootstrap_p99_bca", "speedup_wall": 12.0},
                 {"case": "permutation_exact", "speedup_wall": 1e5}]
        self.assertEqual(bench_all.stats_row({"scipy": "1.17.1", "rows": cells})[3],
                         "short: every bootstrap cell 2.5× short")  # 30 / 12
        self.assertEqual(bench_all.feedback_row([{"results": [delay("leader", 4, 0, 9, 11)]}])[2:], ("—", "—"))

    def test_plugin_rows_judge_the_slowest_policy_and_any_allocation(self):
        slots = {"results": [overhead("online", "ucb1:c=0.1,n0=1", True, 40.0),
                             overhead("online", "thompson:n0=1,sigma=0.1", True, 62.0)]}
        self.assertEqual(bench_all.plugin_row(slots)[2:],
                         ("slowest live policy ≤ 50 ns, heap allocations per call = 0", "short: slowest live policy 1.2× short"))
        knob = dict(overhead("online", "osub:c=0.1,n0=1", True, 90.0), knobs="channels=0,8", timed="getCollInfo")
        ucb1 = dict(overhead("online", "ucb1:c=0.1,n0=1", True, 80.0), knobs="channels=0,8", timed="getCollInfo")
        paired = dict(overhead("online", "ucb1:c=0.1,n0=1", True, 300.0), knobs="channels=0,8",
                      timed="getCollInfo+pick+getChunkSize")  # not the row's: getCollInfo alone is
        doc = {"results": slots["results"] + [knob, ucb1, paired]}
        what, result, goal, verdict = bench_all.plugin_row(doc, knobs=True)
        self.assertIn("512 knob arms", what)
        self.assertEqual(result, "80–90 ns for every live policy (UCB1 80 ns, slowest osub); 0 heap allocations per call")
        self.assertEqual(verdict, "met")
        ucb1["allocations_per_call"] = 0.5
        self.assertEqual(bench_all.plugin_row(doc, knobs=True)[3], "short: heap allocations per call 0.5")

    def test_leader_row_judges_each_role_and_reads_only_the_role_rows(self):
        def role(name, policy, ns, allocations):
            return {"mode": "leader", "role": name, "policy": policy, "ns_per_call_median": ns,
                    "allocations_per_call": allocations}
        doc = {"results": [overhead("online", "ucb1:c=0.1,n0=1", True, 900.0),  # local mode: not this row's
                           dict(role("local", "ucb1:c=0.1,n0=1", 40.0, 0.5), mode="local"),
                           role("leader", "ucb1:c=0.1,n0=1", 45.0, 0.002), role("leader", "greedy:n0=1", 30.0, 0.0),
                           role("follower", "ucb1:c=0.1,n0=1", 10000.0, 0.0),
                           role("follower", "greedy:n0=1", 12000.0, 0.0)]}
        what, result, goal, verdict = bench_all.leader_row(doc)
        self.assertIn("leader mode, 2 ranks", what)
        self.assertEqual(result, "leader 30–45 ns (UCB1 45 ns), 0.002 heap allocations per call; "
                                 "follower 10000–12000 ns (UCB1 10000 ns), 0 heap allocations per call")
        self.assertEqual(verdict, "short: heap allocations per call, leader 0.002, slowest live policy, follower "
                                  "240.0× short")
        with self.assertRaises(bench_all.BenchError):
            bench_all.leader_row({"results": doc["results"][:4]})  # no follower row

    def test_the_cpu_is_named_with_its_family_model_and_widest_simd(self):
        info = ("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n"
                "model name\t: AMD EPYC\nflags\t\t: fpu sse2 avx avx2 fma\n\nprocessor\t: 1\n"
                "model name\t: other\nflags\t\t: avx512f\n")
        self.assertEqual(bench_all.cpu_text(info), "AMD EPYC (family 25 model 1, AVX2)")
        self.assertEqual(bench_all.cpu_text(info.replace("avx2 fma", "avx2 avx512f")),
                         "AMD EPYC (family 25 model 1, AVX-512)")

    def test_replay_row_without_a_policy_is_an_error(self):
        with self.assertRaises(bench_all.BenchError):
            bench_all.replay_row({"results": [{"policy": "ucb1:c=0.1,n0=1", "steps_per_s": 1.0}]})

    def test_stats_row_spans_the_bootstrap_cases_only(self):
        rows = [{"case": "bootstrap_mean_percentile", "speedup_wall": 10.3},
                {"case": "bootstrap_p99_bca", "speedup_wall": 23.2},
                {"case": "bootstrap_mean_bca", "speedup_wall": 16.9},
                {"case": "permutation_exact", "speedup_wall": 100165.9}]
        result = bench_all.stats_row({"scipy": "1.17.1", "rows": rows})[1]
        self.assertTrue(result.startswith("10–23× SciPy 1.17.1"), result)
        self.assertTrue(result.endswith("1.0×10⁵×"), result)

    def test_plugin_row_leaves_out_off_table_and_no_feedback_cases(self):
        doc = {"results": [overhead("off", "", False, 8.7), overhead("table", "", False, 61.7),
                           overhead("online", "auto", True, 23.8), overhead("online", "ucb1:c=0.1,n0=1", True, 49.8),
                           overhead("online", "thompson:n0=1,sigma=0.1", True, 73.7),
                           overhead("online", "ucb1:c=0.1,n0=1", False, 36.1)]}
        self.assertEqual(bench_all.plugin_row(doc)[1],
                         "24–74 ns for every live policy (UCB1 50 ns, slowest thompson); 0 heap allocations per call")

    def test_feedback_row_takes_the_leader_without_calls_in_flight_at_each_rank_count(self):
        docs = [{"results": [delay("local", 1, 0, 0, 0), delay("leader", r, 0, m, p), delay("leader", r, 8, 17, 18)]}
                for r, m, p in ((4, 9, 11), (8, 9, 11), (64, 10, 11))]
        what, result, _, _ = bench_all.feedback_row(docs)
        self.assertIn("4–64 ranks", what)
        self.assertEqual(result, "median 9–10, p90 11 calls")

    def test_gpu_row_without_a_gpu_says_so(self):
        self.assertIn("no GPU", bench_all.gpu_row(None, None)[1])

    def test_gpu_row_without_ucb1_is_an_error(self):
        with self.assertRaises(bench_all.BenchError):
            bench_all.gpu_row({"results": [{"policy": "auto", "steps_per_s": 1.0}]}, "H200")

    def test_replacing_the_section_keeps_what_lies_around_it(self):
        text = f"a\n{bench_all.BEGIN}\nold\n{bench_all.END}\nb\n"
        self.assertEqual(bench_all.replace_section(text, "new\n", "R"),
                         f"a\n{bench_all.BEGIN}\nnew\n{bench_all.END}\nb\n")
        for broken in ("a\n", f"{bench_all.END}\n{bench_all.BEGIN}\n", f"{bench_all.BEGIN}{bench_all.BEGIN}{bench_all.END}"):
            with self.assertRaises(bench_all.UsageProblem):
                bench_all.replace_section(broken, "new\n", "R")


class UsageFirst(unittest.TestCase):
    """Bad usage is found before any benchmark runs: one line, exit 2, no traceback."""

    def fake_build(self, folder):
        """A build folder whose programs only leave a mark when run."""
        self.mark = os.path.join(folder, "ran")
        os.makedirs(os.path.join(folder, "src", "plugin_bench"))
        for path in bench_all.built_programs(folder).values():
            with open(path, "w") as f:
                f.write(f"#!/bin/sh\ntouch {self.mark}\nexit 1\n")
            os.chmod(path, 0o755)
        return folder

    def run_script(self, *args):
        return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench_all.py"), *args],
                              capture_output=True, text=True)

    def test_a_bad_json_target_is_refused_before_any_benchmark(self):
        with tempfile.TemporaryDirectory() as tmp:
            build = self.fake_build(os.path.join(tmp, "build"))
            for target, reason in ((tmp, "is a folder"), (os.path.join(tmp, "no", "such.json"), "does not exist"),
                                   ("/dev/null", "not a regular file"), ("/proc/bench.json", "cannot write in /proc")):
                done = self.run_script("--build", build, "--json", target)
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
                self.assertIn(reason, done.stderr)
                self.assertNotIn("Traceback", done.stderr)
                self.assertFalse(os.path.exists(self.mark), "a benchmark ran before the usage check")

    def test_a_readme_without_markers_is_refused_before_any_benchmark(self):
        with tempfile.TemporaryDirectory() as tmp:
            build = self.fake_build(os.path.join(tmp, "build"))
            readme = os.path.join(tmp, "README.md")
            with open(readme, "w") as f:
                f.write("# no table here\n")
            args = argparse.Namespace(build=build, json=None, update_readme=True, quick=True)
            saved = bench_all.readme_path
            bench_all.readme_path = lambda: readme
            try:
                with self.assertRaises(bench_all.UsageProblem):
                    bench_all.check_arguments(args)
            finally:
                bench_all.readme_path = saved
            self.assertFalse(os.path.exists(self.mark))

    def test_a_readme_that_cannot_be_read_is_refused_before_any_benchmark(self):
        with tempfile.TemporaryDirectory() as tmp:
            build = self.fake_build(os.path.join(tmp, "build"))
            latin1 = os.path.join(tmp, "latin1-readme")
            with open(latin1, "wb") as f:
                f.write(b"caf\xe9\n")
            args = argparse.Namespace(build=build, json=None, update_readme=True, quick=True)
            saved = bench_all.readme_path
            try:
                for readme in (latin1, tmp, os.path.join(tmp, "missing-readme")):
                    bench_all.readme_path = lambda: readme
                    with self.assertRaises(bench_all.UsageProblem, msg=readme):
                        bench_all.check_arguments(args)
            finally:
                bench_all.readme_path = saved

    def test_a_good_json_target_passes_the_check(self):
        with tempfile.TemporaryDirectory() as tmp:
            build = self.fake_build(os.path.join(tmp, "build"))
            args = argparse.Namespace(build=build, json=os.path.join(tmp, "out.json"), update_readme=False, quick=True)
            bench_all.check_arguments(args)  # raises on failure
            done = self.run_script("--build", build, "--json", os.path.join(tmp, "out.json"), "--quick")
            self.assertEqual(done.returncode, 1, done.stderr)  # the fake benchmark fails: exit 1, named
            self.assertTrue(os.path.exists(self.mark))


class Readme(unittest.TestCase):
    def test_the_performance_table_is_the_scripts(self):
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            text = f.read()
        self.assertEqual(text.count(bench_all.BEGIN), 1)
        section = text.split(bench_all.BEGIN, 1)[1].split(bench_all.END, 1)[0].strip("\n").split("\n")
        self.assertTrue(section[0].startswith("Measured ") and "by `python3 scripts/bench_all.py` at" in section[0],
                        section[0])
        self.assertEqual(section[1:4], ["", "| what | result | goal | verdict |", "|---|---|---|---|"])
        labels = [line.split(" | ")[0][2:] for line in section[4:]]
        expected_starts = ["CPU replay, 12 arms", "CPU replay, 512 knob arms", "bootstrap",
                           "plugin `getCollInfo` per call, 8 slots", "plugin `getCollInfo` per call, 512 knob arms",
                           "plugin `getCollInfo` per call in leader mode", "plugin feedback lag", "`ncclbot synth", "GPU replay"]
        self.assertEqual(len(labels), len(expected_starts), labels)
        for label, start in zip(labels, expected_starts):
            self.assertTrue(label.startswith(start), (label, start))
        # Every row's verdict is "met", "short: ..." or "—" (no goal set).
        for line in section[4:]:
            verdict = line.rstrip(" |").split(" | ")[-1]
            self.assertTrue(verdict in ("met", "—") or verdict.startswith("short: "), line)


if __name__ == "__main__":
    unittest.main()
