"""The walk-through of docs/python.md as one script: synthesize a sweep, look at it in pandas,
replay AUTO and three learners, test UCB1 against AUTO context by context, draw the figure.

    python python/examples/walkthrough.py docs/figures/python-walkthrough.png
"""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

import ncclbot

out = sys.argv[1] if len(sys.argv) > 1 else "python-walkthrough.png"

# A simulated forced-arm sweep of the h100-ib-a preset at 16 and 32 nodes.
sw = ncclbot.synth("h100-ib-a", seed=1, nodes=[16, 32])
df = sw.to_pandas()
print(sw)
print(df.head(3).to_string(index=False))
one_mib = df[(df.bytes == 1 << 20) & (df.nodes == 16) & (df.collective == "AllReduce")]
print(one_mib.groupby(["algo", "proto"]).time_us.mean().unstack("proto").round(1))

# AUTO and three warm-started learners, 4 seeds x 200 calls per context.
policies = ["auto", "greedy:n0=4", "ucb1:c=0.1,n0=4", "thompson"]
res = ncclbot.replay(sw, policies, seeds=4, horizon=200, threads=2)
print(res[["policy", "online_mean", "online_p99", "final_mean"]].to_string(index=False))

# Paired by context: UCB1's online loss minus AUTO's, averaged over seeds, then a sign-flip test
# and a bootstrap interval of the mean difference.
raw = ncclbot.replay_raw(sw, ["auto", "ucb1:c=0.1,n0=4"], seeds=4, horizon=200, threads=2)
per_context = raw.groupby(["config", "context"]).online_loss.mean().unstack("config")
diffs = per_context[1] - per_context[0]
test = ncclbot.stats.permutation(diffs.to_numpy(), resamples=9999, seed=1)
ci = ncclbot.stats.bootstrap(diffs.to_numpy(), resamples=9999, seed=1)
print(f"UCB1 - AUTO over {len(diffs)} contexts: {diffs.mean():+.4f} "
      f"[{ci['low']:+.4f}, {ci['high']:+.4f}], sign-flip p = {test['p']:.3g}")

fig, ax = plt.subplots(figsize=(8, 3.4))
x = range(len(res))
ax.bar([i - 0.2 for i in x], res.online_mean * 100, width=0.4, label="online (while learning)")
ax.bar([i + 0.2 for i in x], res.final_mean * 100, width=0.4, label="final (what it settled on)")
ax.set_xticks(list(x), res.policy, fontsize=8)
ax.set_ylabel("mean loss vs best arm (%)")
ax.set_title("h100-ib-a, 16 and 32 nodes: 4 seeds x 200 calls per context", fontsize=10)
ax.legend()
fig.tight_layout()
fig.savefig(out, dpi=110)
print("wrote", out)
