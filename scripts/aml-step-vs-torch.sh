#!/usr/bin/env bash
# Go's AML train and eval steps against the PyTorch reference of the same
# work (ref_torch_aml_step.py), measured alternately in one run on one
# core, as the reference's header asks: PAIRS pairs per size, Go first,
# then the ratio of the medians of wall seeds per second.
#
#   scripts/aml-step-vs-torch.sh REF_DIR [PAIRS] [CPU]
#
# REF_DIR holds ref_torch_aml_step.py; PAIRS defaults to 3; both sides are
# pinned to core CPU (default 1) with taskset. Needs Debian's python3-torch
# (/usr/bin/python3).
set -euo pipefail
ref=${1:?usage: $0 REF_DIR [PAIRS] [CPU]}
pairs=${2:-3}
cpu=${3:-1}
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/edgegnn.test
go test -c -o "$bin" ./aml/edgegnn
declare -A goTrain goEval pyTrain pyEval
sizes=("gin-h32/batch512/fan5x5|" "gin-h64/batch2048/fan10x10|--hidden 64 --batch 2048 --fanout 10,10")
for p in $(seq 1 "$pairs"); do
	for s in "${sizes[@]}"; do
		name=${s%%|*} args=${s#*|}
		# Anchor every level of the name: gin-h32 alone also matches gin-h32-multignn.
		pat="^BenchmarkEdge(Train|Eval)Step\$/^${name//\//\$/^}\$"
		out=$(taskset -c "$cpu" "$bin" -test.run '^$' -test.bench "$pat" -test.cpu 1 -test.benchtime 3s)
		tr=$(awk '/EdgeTrainStep/ {for (i = 1; i <= NF; i++) if ($(i+1) == "seeds/s") print $i}' <<<"$out")
		ev=$(awk '/EdgeEvalStep/ {for (i = 1; i <= NF; i++) if ($(i+1) == "seeds/s") print $i}' <<<"$out")
		# shellcheck disable=SC2086
		py=$(taskset -c "$cpu" /usr/bin/python3 "$ref/ref_torch_aml_step.py" $args | tail -1)
		ptr=$(sed -E 's/.*train_seeds_per_s=([0-9.]+).*/\1/' <<<"$py")
		pev=$(sed -E 's/.*eval_seeds_per_s=([0-9.]+).*/\1/' <<<"$py")
		goTrain[$name]+="$tr " goEval[$name]+="$ev " pyTrain[$name]+="$ptr " pyEval[$name]+="$pev "
		echo "pair $p $name: go train $tr eval $ev | torch train $ptr eval $pev" >&2
	done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
printf '%-28s %10s %10s %10s %10s %7s %7s %9s\n' size go_train torch_train go_eval torch_eval train× eval× eval/train
for s in "${sizes[@]}"; do
	name=${s%%|*}
	gt=$(median <<<"${goTrain[$name]}") pt=$(median <<<"${pyTrain[$name]}")
	ge=$(median <<<"${goEval[$name]}") pe=$(median <<<"${pyEval[$name]}")
	awk -v n="$name" -v gt="$gt" -v pt="$pt" -v ge="$ge" -v pe="$pe" \
		'BEGIN {printf "%-28s %10.0f %10.0f %10.0f %10.0f %7.2f %7.2f %9.2f\n", n, gt, pt, ge, pe, gt/pt, ge/pe, gt/ge}'
done
