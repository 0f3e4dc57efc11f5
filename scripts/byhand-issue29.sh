#!/usr/bin/env bash
# By-hand re-run of issue 29's outside test (attacks 1-7), as an outsider
# would do it: every party a separate process, deployed as docs/DEPLOY.md
# says (graphfed keys, graphfed server --config keys/server.conf, graphfed
# keys ledger, one aggregator, one agent per bank), and the attacker holding
# one bank's seed (the first bank's, "A") with nothing else than the nats
# CLI and gf-forge (cmd/gf-forge), which signs envelopes with that seed.
#
# Usage:
#   scripts/byhand-issue29.sh [ATTACK ...]
#   ATTACK: clean 1 1x 2 2g 2w 3 3x 4a 4b 4c 5 6 7a 7b 7c   (default: all, clean first)
#
# Environment: WORK (default /tmp/byhand29: every deployment is a directory
# of $WORK/runs), BIN (default $WORK/bin: graphfed and gf-forge are built
# there from this tree when missing), NATS_BIN (the nats CLI, default
# ~/go/bin/nats, v0.5.1 tested), PORT0 (first port, default 14500).
# Requires jq and GNU time (/usr/bin/time -v for peak RSS).
#
# Each attack runs in a fresh deployment (its own keys, server, store) on a
# 3-bank tiny AML world (graphfed gen aml --banks 3 --size tiny --seed 1),
# CE-FedGNN, 3 rounds, durable, --local-epochs 4, and every agent with
# --noise-seed 7 so that two runs of the same job are bit-identical and the
# final model of an attacked run can be compared with the clean run's
# (model_sha256 of the aggregator's report, and each bank's test scores).
# The aggregator runs with the contract flags of DEPLOY.md's "The job's
# contract" (--schema HASH:PARAMS --model-clip 100 --model-sigma 0.001
# --grad-sigma 0.001 --max-train-size N), the schema taken from the clean
# run's warning (the walkthrough itself passes none of them; attack 3x runs
# its command as written).
#
# What each attack checks, and where it should be counted:
#   1   signed update, every parameter and gradient value 1e30, each round
#       -> aggregator rejects.norm, "rejected: outside the job's contract";
#       1x: the same against the walkthrough's aggregator (no contract flags)
#   2   signed update of zeros with weight 1e15, each round -> rejects.weight
#   2g  (beyond the issue) an update within the contract (zeros, weight 1)
#       that carries a gradient estimator, which the job's learners do not
#       share, racing A's own each round
#   2w  (beyond the issue) the same without the estimator: what a key
#       holder can still do within the contract; mean and median, each
#       against a clean run under the same rule (L2 distance of the models)
#   3   hello with schema evil/1 just after the aggregator is ready
#       -> rejects.schema, the reply refuses it; 3x: the same against the
#       walkthrough's aggregator (no --schema)
#   4a  60,000 x 10 B on A's own update subject (durable job)
#       -> the update stream's per-sender bound, aggregator garbage rejects
#   4b  30,000 x 10 B on A's own ledger subject during the job
#       -> A's ledger stream limit (discard new), the audit's rejections
#   4c  1,000 junk records on A's ledger before the job starts
#       -> the aggregator must not take them for a prior run; audit
#   5   60 signed embedding messages of 17 MB from A to bank B in round 2
#       -> B's inbox drops charged to A; B's peak RSS (GNU time) vs clean
#   6   after a job: 25 x 16 MiB then 20,000 tiny junk records on A's ledger;
#       graphfed audit timed (GNU time), an agent restart of A and of B
#   7a  1,000 connections with A's key     -> account max_connections
#   7b  100,000 subscriptions on model.all -> account max_subscriptions
#   7c  A fills its own blob bucket        -> account JetStream storage
#
# Bank A's own agent runs honestly beside the attacker in every attack (the
# attacker holds A's seed, not A's machine): "honest agents" are B and C,
# and A's agent's fate is reported too.
#
# Results: $WORK/runs/<attack>/result.txt (key=value) and the table
# $WORK/summary.tsv (one line a deployment: exits of the aggregator and of
# each agent, same_as_clean = model and every bank's test scores equal to
# the clean run's, pooled F1, the aggregator's rejects, seconds). The clean
# run's result and schema stay in $WORK (clean.result, schema) for later
# invocations; delete them to run it again. Every process this script
# starts is killed by its pid when its deployment ends.
set -u

HERE=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-/tmp/byhand29}
BIN=${BIN:-$WORK/bin}
NATS_BIN=${NATS_BIN:-$HOME/go/bin/nats}
PORT0=${PORT0:-14500}
JOB=aml-1
JOB_TIMEOUT=${JOB_TIMEOUT:-180}
NOISE="--noise-seed 7"
ALL="clean 1 1x 2 2g 2w 3 3x 4a 4b 4c 5 6 7a 7b 7c"

mkdir -p "$WORK/runs" "$BIN"
if [ ! -x "$BIN/graphfed" ] || [ ! -x "$BIN/gf-forge" ]; then
  (cd "$HERE" && go build -o "$BIN/graphfed" ./cmd/graphfed && go build -o "$BIN/gf-forge" ./cmd/gf-forge) || exit 1
fi
export PATH="$BIN:$(dirname "$NATS_BIN"):$PATH"

log() { echo "[$(date +%T)] $*" >&2; }

# The world, once.
if [ ! -d "$WORK/world/banks" ]; then
  mkdir -p "$WORK/world" && (cd "$WORK/world" &&
    graphfed gen aml --banks 3 --size tiny --seed 1 --out world >/dev/null 2>&1 &&
    graphfed split aml --trans world/HI-Tiny_Trans.csv --out banks >/dev/null 2>&1) || exit 1
fi
BANKLIST=$(ls "$WORK/world/banks")
BANKS=$(echo $BANKLIST | tr ' ' ,)
A=$(echo $BANKLIST | cut -d' ' -f1)   # the attacker's bank (its seed is the attacker's)
B=$(echo $BANKLIST | cut -d' ' -f2)   # the victim of the embedding flood
C=$(echo $BANKLIST | cut -d' ' -f3)
MAX_TRAIN=$(($(wc -l < "$WORK/world/world/HI-Tiny_Trans.csv") - 1))   # the world's transactions: no bank trains on more

# ---------------------------------------------------------------- helpers

PIDS_ALL=""   # every pid started in the current deployment
track() { PIDS_ALL="$PIDS_ALL $1"; }

# killtree PID: the process and its children (GNU time's child), by pid.
killtree() {
  local p=$1 sig=${2:-TERM} c
  for c in $(pgrep -P "$p" 2>/dev/null); do kill -"$sig" "$c" 2>/dev/null; done
  kill -"$sig" "$p" 2>/dev/null
}

# until_log FILE PATTERN SECONDS [PID]: wait for a line (or PID's end).
until_log() {
  local f=$1 pat=$2 t=$3 pid=${4:-} i=0
  while ! grep -qE "$pat" "$f" 2>/dev/null; do
    [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null && return 1
    i=$((i + 1)); [ $i -gt $((t * 10)) ] && return 1
    sleep 0.1
  done
}

put() { echo "$1=$2" >> "$D/result.txt"; }

# deploy NAME: a fresh deployment in $WORK/runs/NAME, as DEPLOY.md's walkthrough.
PORTN=0
deploy() {
  NAME=$1; D=$WORK/runs/$NAME
  # the deployment's port: one per attack, from PORT0
  PORT=$((PORT0 + PORTN)); PORTN=$((PORTN + 1))
  NATS=nats://127.0.0.1:$PORT
  rm -rf "$D"; mkdir -p "$D"; cd "$D" || exit 1
  : > result.txt; PIDS_ALL=""
  ln -s "$WORK/world/banks" banks
  graphfed keys --job $JOB --banks "$BANKS" --listen 127.0.0.1:$PORT --store js --out keys > keys.log 2>&1 || { log "keys failed"; cat keys.log; exit 1; }
  graphfed server --config keys/server.conf --port $PORT > server.log 2>&1 &
  SERVER=$!; track $SERVER
  until_log server.log listening 20 $SERVER || { log "server did not start"; cat server.log; exit 1; }
  graphfed keys ledger --nats $NATS --creds keys/ledger-admin.nk --keyring keys/keyring.json > ledger-admin.log 2>&1 || { log "keys ledger failed"; cat ledger-admin.log; exit 1; }
  APUB=$(sed -n 's/^# Public key: //p' keys/$A.nk)
  # the attacker: the nats CLI with A's seed (and its inbox prefix, for requests)
  ATT="nats -s $NATS --nkey keys/$A.nk --inbox-prefix _INBOX.$APUB --timeout 10s"
  # the operators' views (not the attacker's)
  AGGCLI="nats -s $NATS --nkey keys/aggregator.nk --inbox-prefix _INBOX.$(sed -n 's/^# Public key: //p' keys/aggregator.nk) --timeout 10s"
  ADMIN="nats -s $NATS --nkey keys/ledger-admin.nk --inbox-prefix _INBOX.$(sed -n 's/^# Public key: //p' keys/ledger-admin.nk) --timeout 10s"
  T0=$(date +%s.%N)
  log "== $NAME: deployment on $NATS in $D"
}

server_rss() { awk '/^VmRSS/ {print $2}' /proc/$SERVER/status 2>/dev/null; }
server_hwm() { awk '/^VmHWM/ {print $2}' /proc/$SERVER/status 2>/dev/null; }
server_fds() { ls /proc/$SERVER/fd 2>/dev/null | wc -l; }

# aggregator [FLAGS]: the walkthrough's aggregator command plus FLAGS
# (contract flags, --robust...), logging at debug so that the script sees
# the rounds open.
aggregator() {
  graphfed aggregator --nats $NATS --job $JOB --algo cefedgnn --task aml \
    --creds keys/aggregator.nk --keyring keys/keyring.json \
    --clients "$BANKS" --min-clients 3 --rounds 3 --durable --log-level debug "$@" \
    --json > aggregator.json 2> aggregator.log &
  AGG=$!; track $AGG
  until_log aggregator.log "aggregator ready" 30 $AGG
}

CONTRACT=()
contract() {
  [ -f "$WORK/schema" ] || { log "no schema yet: run the clean job first"; exit 1; }
  CONTRACT=(--schema "$(cat "$WORK/schema")" --model-clip 100 --model-sigma 0.001 --grad-sigma 0.001 --max-train-size $MAX_TRAIN)
}

# agent BANK [FLAGS]: the walkthrough's agent command under GNU time.
declare -A AGENT
agent() {
  local b=$1; shift
  /usr/bin/time -v -o $b.time graphfed agent --nats $NATS --job $JOB --task aml --data banks/$b \
    --creds keys/$b.nk --keyring keys/keyring.json --durable --local-epochs 4 $NOISE "$@" \
    --json > $b.json 2> $b.log &
  AGENT[$b]=$!; track $!
}
agents() { local b; for b in $BANKLIST; do agent $b "$@"; done; }

# wait_round R: the aggregator opened round R (its debug log).
wait_round() { until_log aggregator.log "round open.* round=$1( |$)" 60 $AGG; }

# finish: wait for the aggregator and the agents (JOB_TIMEOUT at most; what
# is left is killed and said so), then record what happened.
finish() {
  local deadline=$(( $(date +%s) + JOB_TIMEOUT )) p b left
  while :; do
    left=""
    for p in $AGG ${AGENT[@]}; do kill -0 $p 2>/dev/null && left="$left $p"; done
    [ -z "$left" ] && break
    if [ $(date +%s) -ge $deadline ]; then
      log "still running after ${JOB_TIMEOUT}s: killing$left"; put killed_after_timeout "$left"
      for p in $left; do killtree $p; done; sleep 1
      for p in $left; do killtree $p KILL; done
      break
    fi
    sleep 0.2
  done
  wait $AGG 2>/dev/null; put exit_aggregator $?
  for b in $BANKLIST; do wait ${AGENT[$b]} 2>/dev/null; put exit_$b $?; done
  put job_seconds "$(echo "$(date +%s.%N) - $T0" | bc | cut -c1-6)"
  local r; r=$(tail -n1 aggregator.json 2>/dev/null)
  if echo "$r" | jq -e . >/dev/null 2>&1; then
    put model_sha256 "$(echo "$r" | jq -r .metrics.model_sha256)"
    put test_f1_pooled "$(echo "$r" | jq -r .metrics.test_f1_illicit_pooled)"
    put agg_rejects "$(echo "$r" | jq -c .metrics.rejects)"
    put agg_dropped "$(echo "$r" | jq -c .metrics.dropped)"
    put agg_flow_A "$(echo "$r" | jq -c ".metrics.flow.senders[\"$A\"]")"
    put rounds_closed_at_deadline "$(echo "$r" | jq -r .metrics.rounds_closed_at_deadline)"
    put robust_set_aside "$(echo "$r" | jq -c '.metrics.robust_set_aside // empty')"
  else
    put model_sha256 none
  fi
  put contract_rejects_logged_A "$(grep "rejected: outside the job's contract" aggregator.log | grep -c "client=$A")"
  for b in $BANKLIST; do
    r=$(tail -n1 $b.json 2>/dev/null)
    if echo "$r" | jq -e . >/dev/null 2>&1; then
      put scores_$b "$(echo "$r" | jq -c '.metrics | with_entries(select(.key|test("^test_")))' | sha256sum | cut -c1-16)"
      put test_f1_$b "$(echo "$r" | jq -r .metrics.test_f1_illicit)"
      put rejects_$b "$(echo "$r" | jq -c .metrics.rejects)"
      put inbox_from_A_at_$b "$(echo "$r" | jq -c ".metrics.inbox.senders[\"$A\"] // {}")"
      put inbox_peak_$b "$(echo "$r" | jq -c '[.metrics.inbox.peak_bytes, .metrics.inbox.bound_bytes]')"
      put emb_from_$b "$(echo "$r" | jq -c .metrics.emb_received_from)"
    else
      put scores_$b none
    fi
    put maxrss_kb_$b "$(awk -F': ' '/Maximum resident/ {print $2}' $b.time 2>/dev/null)"
  done
}

# audit [FILE]: graphfed audit as DEPLOY.md step 7, under GNU time.
audit() {
  local out=${1:-audit}
  /usr/bin/time -v -o $out.time graphfed audit --nats $NATS --job $JOB --creds keys/auditor.nk \
    --keyring keys/keyring.json --expect-heads aggregator.json --json > $out.json 2> $out.log
  put ${out}_exit $?
  put ${out}_seconds "$(awk -F': ' '/Elapsed/ {print $2}' $out.time)"
  put ${out}_maxrss_kb "$(awk -F': ' '/Maximum resident/ {print $2}' $out.time)"
  local r; r=$(tail -n1 $out.json)
  if echo "$r" | jq -e . >/dev/null 2>&1; then
    put ${out}_intact "$(echo "$r" | jq -c '[.metrics.ledger_integrity.intact, .privacy.integrity]')"
    put ${out}_entries "$(echo "$r" | jq -c '.metrics.entries')"
    put ${out}_records "$(echo "$r" | jq -c '.metrics.records')"
    put ${out}_rejected "$(echo "$r" | jq -c '.metrics.rejected')"
    put ${out}_rejected_by_client "$(echo "$r" | jq -c '[.metrics.ledger_integrity.rejected[]? | (.client // .Client)] | group_by(.) | map({(.[0] | tostring): length}) | add // {}')"
    put ${out}_epsilon "$(echo "$r" | jq -c '.privacy | [.epsilon_model, .epsilon_p50, .epsilon_p100]')"
  fi
}

# teardown: the server's refusals and memory, then every process started.
teardown() {
  put server_vmhwm_kb "$(server_hwm)"
  local p
  for p in $PIDS_ALL; do kill -0 $p 2>/dev/null && [ $p != $SERVER ] && killtree $p; done
  kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null
  for p in $PIDS_ALL; do kill -0 $p 2>/dev/null && killtree $p KILL; done
  put server_refusals "$(grep -o 'refusals={[^}]*}' server.log | tail -1)"
  put server_events "$(grep -o 'event=[a-z_]*' server.log | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
  verdict
  cd "$WORK"
}

# verdict: one line of the summary table.
verdict() {
  local alive="" b v same
  v() { sed -n "s/^$1=//p" "$D/result.txt" | tail -1; }
  for b in $BANKLIST; do alive="$alive $b:$(v exit_$b)"; done
  same=no; [ "$NAME" = clean ] && same=-
  if [ -f "$WORK/clean.result" ] && [ "$NAME" != clean ]; then
    [ "$(v model_sha256)" = "$(sed -n 's/^model_sha256=//p' "$WORK/clean.result")" ] && same=model
    for b in $BANKLIST; do
      [ "$(v scores_$b)" = "$(sed -n "s/^scores_$b=//p" "$WORK/clean.result")" ] || { [ $same = model ] && same=model-only; }
    done
    [ $same = model ] && same=yes
  fi
  printf "%s\tagg:%s%s\tsame_as_clean:%s\tf1:%s\trejects:%s\tseconds:%s\n" "$NAME" "$(v exit_aggregator)" "$alive" "$same" \
    "$(v test_f1_pooled)" "$(v agg_rejects)" "$(v job_seconds)" | tee -a "$WORK/summary.tsv"
}

forge() { gf-forge --job $JOB --from $A --seed keys/$A.nk "$@"; }

NPARAMS() { cut -d: -f2 "$WORK/schema"; }

# ---------------------------------------------------------------- attacks

# clean: the job undisturbed (twice: the second run shows it is bit for bit
# reproducible with seeded noise); the schema every bank prints from its
# own data (graphfed agent --print-schema) is the contract of every run: on
# a keyring the aggregator refuses to start without it.
attack_clean() {
  local run
  for run in clean clean2; do
    deploy $run
    graphfed agent --print-schema --job $JOB --task aml --data banks/$(ls banks | head -1) > "$WORK/schema"
    contract; aggregator "${CONTRACT[@]}"
    agents
    finish
    audit
    if [ $run = clean ]; then
      put schema "$(cat "$WORK/schema")"
      restart_probe clean   # agent restarts of A and B, for attack 6's comparison
      cp result.txt "$WORK/clean.result"
    fi
    teardown
  done
}

# the update forged for every round, published on A's update subject once
# the round is open (before or beside A's own).
forged_updates() {
  local r
  for r in 1 2 3; do
    forge update --round $r --params $(NPARAMS) --grad "$@" > u$r.bin 2>/dev/null
    wait_round $r || { log "round $r never opened"; break; }
    $ATT pub gf.$JOB.update.$A --force-stdin --no-templates < u$r.bin >> attacker.log 2>&1
    put sent_round_$r "$(stat -c %s u$r.bin) bytes"
  done
}

attack_1() {
  deploy 1; contract; aggregator "${CONTRACT[@]}"; agents
  forged_updates --value 1e30 --weight 1
  finish; teardown
}

# 1x: attack 1 against the walkthrough's aggregator command as written:
# --schema only, the norm bound from the banks' default clip and noise.
attack_1x() {
  deploy 1x; aggregator --schema "$(cat "$WORK/schema")"; agents
  forged_updates --value 1e30 --weight 1
  finish; teardown
}

attack_2() {
  deploy 2; contract; aggregator "${CONTRACT[@]}"; agents
  forged_updates --value 0 --weight 1e15
  finish; teardown
}

# final_model FILE: the job's final global model as the durable aggregator
# stored it (object model-3 of GF_MODELS_<JOB>, read with its key).
final_model() { $AGGCLI object get GF_MODELS_AML_1 model-3 -O "$1" --force > /dev/null 2>&1; }

# model_dist A B: L2 distance of two stored global models (aggregator's
# GFM2 layout: aggregator/store.go encodeModels), and A's norm.
model_dist() {
  python3 - "$1" "$2" <<'PY'
import struct, sys, math
def params(path):
    b = open(path, 'rb').read()
    assert b[:4] == b'GFM2', path
    o = 4 + 8 + 4
    (n,) = struct.unpack_from('<H', b, o); o += 2 + n + 8 + 1 + 8
    np_, ng = struct.unpack_from('<II', b, o); o += 8
    return struct.unpack_from('<%df' % np_, b, o), ng
a, ga = params(sys.argv[1]); c, gc = params(sys.argv[2])
d = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, c)))
print("dist=%.6g norm=%.6g grad_values=%d/%d" % (d, math.sqrt(sum(x * x for x in a)), ga, gc))
PY
}

# in_contract_updates RULE NAME [FORGE FLAGS]: a clean run under RULE, then
# the same with A's key sending, as each round opens (before A's agent has
# trained), an update of zeros of weight 1: within the contract (norm 0,
# weight under A's declared size), so it is accepted and A's own arrives
# as a duplicate or late.
in_contract_updates() {
  local rule=$1 name=$2; shift 2
  local extra=() r ref; [ $rule != mean ] && extra=(--robust $rule)
  deploy $name-clean-$rule; contract; aggregator "${CONTRACT[@]}" "${extra[@]}"; agents; finish
  ref=$(sed -n 's/^model_sha256=//p' result.txt); final_model "$WORK/$name-clean-$rule.model"; teardown
  deploy $name-$rule; contract; aggregator "${CONTRACT[@]}" "${extra[@]}"
  for r in 1 2 3; do forge update --round $r --params $(NPARAMS) --value 0 --weight 1 "$@" > u$r.bin 2>/dev/null; done
  agents
  for r in 1 2 3; do
    wait_round $r || break
    $ATT pub gf.$JOB.update.$A --force-stdin --no-templates < u$r.bin >> attacker.log 2>&1
  done
  finish
  put clean_same_rule_sha256 "$ref"
  put same_as_clean_same_rule "$([ "$(sed -n 's/^model_sha256=//p' result.txt)" = "$ref" ] && echo yes || echo no)"
  put A_own_update_dropped "$(grep 'update dropped' aggregator.log | grep "client=$A" | grep -o 'reason=[a-z_]*' | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
  put agent_errors "$(grep -ho 'ERR agent stopped error="[^"]*' *.log | sort | uniq -c | tr -s ' ' | cut -c1-220 | tr '\n' ';')"
  if final_model final.model && [ -f "$WORK/$name-clean-$rule.model" ]; then
    put model_vs_clean_same_rule "$(model_dist final.model "$WORK/$name-clean-$rule.model")"
    [ -f "$WORK/$name-clean-mean.model" ] && put model_vs_clean_mean "$(model_dist final.model "$WORK/$name-clean-mean.model")"
  fi
  teardown
}

# 2g: that update also carries a gradient estimator (zeros), which the AML
# learners (Adam) do not share.
attack_2g() { in_contract_updates mean 2g --grad; in_contract_updates median 2g --grad; }

# 2w: parameters only: what robust aggregation is for.
attack_2w() { in_contract_updates mean 2w; in_contract_updates median 2w; }

# 3: a hello of schema evil/1 as a request (the hello reply comes back on
# A's inbox), just after the aggregator is ready, before any agent.
hello_attack() {
  forge hello --schema evil --params 1 > hello.bin 2>/dev/null
  $ATT req gf.$JOB.hello.$A --force-stdin --no-templates --raw < hello.bin > reply.bin 2> attacker.log
  local why; why=$(strings reply.bin | grep -o 'differs[^"]*' | head -1 | cut -c1-120)
  put hello_reply "${why:-no refusal reason in the reply: accepted} ($(stat -c %s reply.bin) bytes)"
}

# the schema the checkpoint holds (what a --resume would keep)
checkpoint_schema() {
  $AGGCLI kv get GF_AGG_AML_1 state --raw > checkpoint.json 2>/dev/null
  put checkpoint_bytes "$(stat -c %s checkpoint.json)"
  put checkpoint_schema "job's:$(grep -c "$(cut -d: -f1 "$WORK/schema")" checkpoint.json) evil:$(grep -c '"evil"' checkpoint.json)"
}

attack_3() {
  deploy 3; contract; aggregator "${CONTRACT[@]}"
  hello_attack
  agents
  finish
  checkpoint_schema
  teardown
}

# 3x: an aggregator on a keyring without --schema: it must refuse to
# start (before, the first hello's schema was adopted, evil/1 included).
attack_3x() {
  deploy 3x
  graphfed aggregator --nats $NATS --job $JOB --algo cefedgnn --task aml \
    --creds keys/aggregator.nk --keyring keys/keyring.json \
    --clients "$BANKS" --min-clients 3 --rounds 3 --durable --json > aggregator.json 2> aggregator.log
  put aggregator_exit $?
  put refusal "$(grep -o 'a job on a keyring fixes its model schema[^"]*' aggregator.log | head -1 | cut -c1-90)"
  teardown
}

# 3x-old: kept for the record of what the old walkthrough did.
attack_3x_old() {
  deploy 3x; aggregator
  hello_attack
  agents
  JOB_TIMEOUT=40 finish
  checkpoint_schema
  put refused_banks "$(grep -l 'differs from the job' *.log 2>/dev/null | tr '\n' ' ')"
  teardown
}

# 4a: 60,000 x 10 B on A's own update subject, from the moment the
# aggregator is ready (durable job: the update stream).
attack_4a() {
  deploy 4a; contract; aggregator "${CONTRACT[@]}"; agents
  local t=$(date +%s.%N)
  $ATT pub gf.$JOB.update.$A 0123456789 --count 60000 --no-templates -q > attacker.log 2>&1
  put flood_seconds "$(echo "$(date +%s.%N) - $t" | bc | cut -c1-5)"
  finish
  put update_stream "$($AGGCLI stream info GF_UPDATES_AML_1 -j 2>/dev/null | jq -c '{messages: .state.messages, bytes: .state.bytes, subjects: .state.num_subjects, max_msgs_per_subject: .config.max_msgs_per_subject, discard_new_per_subject: .config.discard_new_per_subject}')"
  put wrn_lines_aggregator "$(grep -c ' WRN ' aggregator.log)"
  put wrn_lines_A "$(grep -c ' WRN ' $A.log)"
  teardown
}

ledger_info() {
  $ADMIN stream info GF_LEDGER_AML_1-$(echo $1 | tr a-z A-Z) -j 2>/dev/null |
    jq -c '{messages: .state.messages, bytes: .state.bytes, max_msgs: .config.max_msgs, max_bytes: .config.max_bytes, discard: .config.discard}'
}

# ledger_settled PARTY: core publishes are stored after the CLI is done
# (every append fsynced): wait until the party's stream stops growing.
ledger_settled() {
  local n=-1 m
  while m=$(ledger_info $1 | jq -r .messages) && [ "$m" != "$n" ]; do n=$m; sleep 3; done
}

# 4b: 30,000 x 10 B on A's own ledger subject while the job runs.
attack_4b() {
  deploy 4b; contract; aggregator "${CONTRACT[@]}"; agents
  local t=$(date +%s.%N)
  $ATT pub gf.$JOB.ledger.$A 0123456789 --count 30000 --no-templates -q > attacker.log 2>&1
  put flood_seconds "$(echo "$(date +%s.%N) - $t" | bc | cut -c1-5)"
  finish
  put ledger_A "$(ledger_info $A)"
  put ledger_B "$(ledger_info $B)"
  audit
  teardown
}

# 4c: junk on A's ledger before the job starts.
attack_4c() {
  deploy 4c
  $ATT pub gf.$JOB.ledger.$A 0123456789 --count 1000 --no-templates -q > attacker.log 2>&1
  ledger_settled $A
  put ledger_A_before "$(ledger_info $A)"
  contract; aggregator "${CONTRACT[@]}" || put aggregator_refused "$(grep -o 'job aml-1 has[^"]*' aggregator.log | head -1 | cut -c1-160)"
  agents
  finish
  put ledger_A "$(ledger_info $A)"
  audit
  teardown
}

# 5: 60 signed embedding messages of 17 MB from A to B once round 2 opens.
attack_5() {
  deploy 5; contract
  forge emb --to $B --round 2 --bytes 17000000 > emb.bin 2>/dev/null
  put emb_message_bytes "$(stat -c %s emb.bin)"
  aggregator "${CONTRACT[@]}"; agents
  wait_round 2
  local t=$(date +%s.%N)
  $ATT pub gf.$JOB.emb.$A.$B --force-stdin --no-templates --count 60 < emb.bin > attacker.log 2>&1
  put flood_seconds "$(echo "$(date +%s.%N) - $t" | bc | cut -c1-5)"
  finish
  put rejected_at_B "$(grep -c 'rejected message' $B.log)"
  put inbox_drop_lines_B "$(grep -c 'inbox full' $B.log)"
  teardown
  rm -f "$D/emb.bin"
}

# restart_probe TAG: start A's and B's agents again on the finished job
# (no aggregator runs): each reads its own ledger at start, then says
# hello; time to the first hello retry and peak RSS, then SIGINT.
restart_probe() {
  local tag=$1 b p c t
  for b in $A $B; do
    t=$(date +%s.%N)
    /usr/bin/time -v -o restart-$tag-$b.time graphfed agent --nats $NATS --job $JOB --task aml --data banks/$b \
      --creds keys/$b.nk --keyring keys/keyring.json --durable --local-epochs 4 $NOISE --log-level debug \
      > restart-$tag-$b.out 2> restart-$tag-$b.log &
    p=$!; track $p
    if until_log restart-$tag-$b.log "hello unanswered|joined|agent stopped" 120 $p; then
      put restart_${tag}_${b}_to_hello_s "$(echo "$(date +%s.%N) - $t" | bc | cut -c1-5)"
    else
      put restart_${tag}_${b}_to_hello_s "none"
    fi
    put restart_${tag}_${b}_skipped "$(grep -c 'record skipped' restart-$tag-$b.log)$(grep -o 'more=[0-9]*' restart-$tag-$b.log | head -1 | sed 's/^/ /')"
    killtree $p INT; sleep 1; killtree $p KILL; wait $p 2>/dev/null
    put restart_${tag}_${b}_maxrss_kb "$(awk -F': ' '/Maximum resident/ {print $2}' restart-$tag-$b.time)"
  done
}

# 6: after a job, 25 x 16 MiB then 20,000 tiny junk records on A's ledger;
# the audit and restarts of A and B, before and after.
attack_6() {
  deploy 6; contract; aggregator "${CONTRACT[@]}"; agents; finish
  audit audit-before
  head -c $((16 << 20)) /dev/zero | tr '\0' 'j' > big.bin
  local t=$(date +%s.%N)
  $ATT pub gf.$JOB.ledger.$A --force-stdin --no-templates --count 25 < big.bin > attacker.log 2>&1
  $ATT pub gf.$JOB.ledger.$A 0123456789 --count 20000 --no-templates -q >> attacker.log 2>&1
  put junk_seconds "$(echo "$(date +%s.%N) - $t" | bc | cut -c1-5)"
  rm -f big.bin
  ledger_settled $A
  put junk_stored_seconds "$(echo "$(date +%s.%N) - $t" | bc | cut -c1-5)"
  put ledger_A "$(ledger_info $A)"
  put ledger_B "$(ledger_info $B)"
  audit
  restart_probe junk
  teardown
}

# 7a: 1,000 connections with A's key while the job runs: 8 held open (as
# many as the account takes), then 1,000 more attempted, 10 at a time (the
# CLI processes share the machine's cores with the job: at 50 at a time
# the load average reached 18 and the rounds took 6-9 s instead of 1).
attack_7a() {
  deploy 7a; contract; aggregator "${CONTRACT[@]}"; agents
  wait_round 1
  put server_rss_kb_before "$(server_rss)"; put server_fds_before "$(server_fds)"
  local i j holders="" t=$(date +%s.%N)
  for i in $(seq 8); do
    nats -s $NATS --nkey keys/$A.nk sub gf.$JOB.round > holder-$i.log 2>&1 &
    holders="$holders $!"; track $!
  done
  sleep 1
  put held_connections "$(for i in $holders; do kill -0 $i 2>/dev/null && echo; done | wc -l)"
  local batch during=
  for i in $(seq 100); do
    batch=""
    for j in $(seq 10); do
      timeout 5 nats -s $NATS --nkey keys/$A.nk sub gf.$JOB.round --count 1 > conn-$i-$j.log 2>&1 &
      batch="$batch $!"
    done
    [ $i = 5 ] && { put server_rss_kb_during "$(server_rss)"; put server_fds_during "$(server_fds)"; }
    wait $batch 2>/dev/null
    # the job is short: how many attempts it overlapped (after it, A's
    # agent's connection is free and some attempts get in)
    kill -0 $AGG 2>/dev/null && during=$((i * 10))
  done
  put attempts_while_job_ran "${during:-0}"
  put attempts_seconds "$(echo "$(date +%s.%N) - $t" | bc | cut -c1-5)"
  put attempts_refused "$(grep -l 'maximum account active connections exceeded' conn-*.log | wc -l)"
  put attempts_otherwise "$(grep -L 'maximum account active connections exceeded' conn-*.log | wc -l) (empty log: still connecting when timeout 5 s killed it: $(find . -name 'conn-*.log' -empty | wc -l))"
  put attempts_other_sample "$(grep -L 'maximum account active connections exceeded' conn-*.log | head -1 | xargs -r cat | head -2 | tr '\n' ' ' | cut -c1-160)"
  rm -f conn-*.log
  finish
  for i in $holders; do killtree $i; wait $i 2>/dev/null; done
  put server_limit_lines "$(grep -c 'event=limit' server.log)"
  teardown
}

# 7b: 100,000 subscriptions on model.all with A's key, in 4 connections of
# 25,000 subjects each, while the job runs.
attack_7b() {
  deploy 7b; contract; aggregator "${CONTRACT[@]}"; agents
  wait_round 1
  put server_rss_kb_before "$(server_rss)"
  local i subs=() pids=""
  for i in $(seq 25000); do subs+=(gf.$JOB.model.all); done
  for i in 1 2 3 4; do
    nats -s $NATS --nkey keys/$A.nk sub "${subs[@]}" > attacker-$i.log 2>&1 &
    pids="$pids $!"; track $!
  done
  sleep 5
  put server_rss_kb_during "$(server_rss)"
  finish
  for i in $pids; do killtree $i; wait $i 2>/dev/null; done
  put attacker_errors "$(cat attacker-*.log | grep -ciE 'maximum|exceeded')"
  put attacker_error_sample "$(cat attacker-*.log | grep -iE 'maximum|exceeded' | head -1 | cut -c1-160)"
  teardown
}

# 7c: A fills its own blob bucket (created by A itself if its agent has not:
# a tiny model travels inline) while the job runs.
attack_7c() {
  deploy 7c; contract; aggregator "${CONTRACT[@]}"; agents
  wait_round 1
  local bucket=GF_BLOBS_AML_1_$A i
  $ATT object info $bucket > /dev/null 2>&1 || $ATT object add $bucket > attacker.log 2>&1
  head -c $((64 << 20)) /dev/urandom > blob.bin
  local t=$(date +%s.%N) n=0
  for i in $(seq 16); do
    if $ATT object put $bucket blob.bin --name junk-$i --no-progress >> attacker.log 2>&1; then n=$((n + 1)); else break; fi
  done
  put bucket_fill_seconds "$(echo "$(date +%s.%N) - $t" | bc | cut -c1-5)"
  put bucket_objects_of_64MiB "$n"
  put bucket_refusal "$(grep -iE 'exceeded|insufficient|maximum|error' attacker.log | tail -1 | cut -c1-160)"
  put bucket_state "$($ATT stream info OBJ_$bucket -j 2>/dev/null | jq -c '{bytes: .state.bytes, max_bytes: .config.max_bytes}')"
  put account_js "$($ATT account info 2>/dev/null | grep -iE '^ *(file )?storage:' | tr -s ' ' | tr '\n' ';')"
  rm -f blob.bin
  finish
  teardown
}

# ---------------------------------------------------------------- main
trap 'for p in $PIDS_ALL; do killtree $p KILL; done' EXIT
[ $# -eq 0 ] && set -- $ALL
: > "$WORK/summary.tsv"
for a in "$@"; do
  [ "$a" != clean ] && [ ! -f "$WORK/clean.result" ] && attack_clean
  attack_$a
done
echo; echo "summary ($WORK/summary.tsv):"; cat "$WORK/summary.tsv"
