#!/usr/bin/env bash
# By-hand run of issue 31's separate-process bar: three bank agents and an
# aggregator as separate processes on a `graphfed keys` configuration
# (secure aggregation on by default), an AML CE-FedGNN job, one bank
# SIGKILLed right after it sent its masked update of round 2, a tap with
# the aggregator's own key on gf.<job>.> (cmd/gf-tap: what a curious
# aggregator receives), and the audit of the job's ledger.
#
# Usage: scripts/byhand-issue31.sh
# Environment: WORK (default /tmp/byhand31), BIN (default $WORK/bin),
# PORT (default 14631), ROUNDS (default 4).
# Results: $WORK/run/result.txt, tap.json, audit.json and every log.
set -u
HERE=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-/tmp/byhand31}
BIN=${BIN:-$WORK/bin}
PORT=${PORT:-14631}
ROUNDS=${ROUNDS:-4}
JOB=aml-sa
NATS=nats://127.0.0.1:$PORT
mkdir -p "$WORK" "$BIN"
(cd "$HERE" && go build -o "$BIN/graphfed" ./cmd/graphfed && go build -o "$BIN/gf-tap" ./cmd/gf-tap) || exit 1
export PATH="$BIN:$PATH"
log() { echo "[$(date +%T)] $*" >&2; }
until_log() {
  local f=$1 pat=$2 t=$3 i=0
  while ! grep -qE "$pat" "$f" 2>/dev/null; do i=$((i + 1)); [ $i -gt $((t * 10)) ] && return 1; sleep 0.1; done
}
if [ ! -d "$WORK/world/banks" ]; then
  mkdir -p "$WORK/world" && (cd "$WORK/world" &&
    graphfed gen aml --banks 3 --size demo --seed 1 --out world >/dev/null 2>&1 &&
    graphfed split aml --trans $(ls world/*_Trans.csv) --out banks >/dev/null 2>&1) || exit 1
fi
BANKLIST=$(ls "$WORK/world/banks"); BANKS=$(echo $BANKLIST | tr ' ' ,)
KILLED=$(echo $BANKLIST | cut -d' ' -f3)
D=$WORK/run; rm -rf "$D"; mkdir -p "$D"; cd "$D" || exit 1
: > result.txt; put() { echo "$1=$2" >> result.txt; }
PIDS=""
trap 'for p in $PIDS; do kill $p 2>/dev/null; done' EXIT
graphfed keys --job $JOB --banks "$BANKS" --listen 127.0.0.1:$PORT --store js --out keys > keys.log 2>&1 || { cat keys.log; exit 1; }
put secagg_in_server_conf "$(grep -c 'sa\.' keys/server.conf)"
graphfed server --config keys/server.conf --port $PORT > server.log 2>&1 & PIDS="$PIDS $!"
until_log server.log listening 20 || { cat server.log; exit 1; }
graphfed keys ledger --nats $NATS --creds keys/ledger-admin.nk --keyring keys/keyring.json > ledger-admin.log 2>&1 || { cat ledger-admin.log; exit 1; }
SCHEMA=$(graphfed agent --print-schema --job $JOB --task aml --data "$WORK/world/banks/$KILLED" --log-level warn --json | tail -1 | sed -n 's/.*"schema":"\([^"]*\)".*/\1/p')
put schema "$SCHEMA"
gf-tap --nats $NATS --creds keys/aggregator.nk --job $JOB > tap.json 2> tap.log & TAP=$!; PIDS="$PIDS $TAP"
until_log tap.log listening 10
graphfed aggregator --nats $NATS --job $JOB --algo cefedgnn --task aml --creds keys/aggregator.nk --keyring keys/keyring.json \
  --clients "$BANKS" --min-clients 3 --rounds $ROUNDS --round-timeout 20s --schema "$SCHEMA" --log-level debug --json \
  > aggregator.json 2> aggregator.log & AGG=$!; PIDS="$PIDS $AGG"
until_log aggregator.log "aggregator ready" 30 || { cat aggregator.log; exit 1; }
declare -A AG
for b in $BANKLIST; do
  graphfed agent --nats $NATS --job $JOB --task aml --data "$WORK/world/banks/$b" --creds keys/$b.nk --keyring keys/keyring.json \
    --json > $b.json 2> $b.log & AG[$b]=$!; PIDS="$PIDS $!"
done
log "waiting for $KILLED's masked input of round 2"
if until_log tap.log "kind=sa.masked from=$KILLED round=2" 300; then
  kill -KILL ${AG[$KILLED]}; put killed "$KILLED after its masked input of round 2 ($(date +%T.%N))"; log "SIGKILLed $KILLED"
else
  put killed none
fi
for i in $(seq 1 600); do kill -0 $AGG 2>/dev/null || break; sleep 1; done
for b in $BANKLIST; do [ $b != $KILLED ] && wait ${AG[$b]}; done
sleep 1; kill -TERM $TAP; wait $TAP
r=$(tail -n1 aggregator.json)
put rounds "$(echo "$r" | jq -r .rounds)"
put closes "$(grep 'round closed' aggregator.log | sed 's/.*round=\([0-9]*\).*secagg_dropouts=\([0-9]*\).*secagg_survivors=\([0-9]*\).*secagg_t=\([0-9]*\).*/r\1:surv=\3,drop=\2,t=\4/' | tr '\n' ' ')"
put secagg "$(echo "$r" | jq -c '.metrics.secagg // empty')"
for b in $BANKLIST; do [ $b != $KILLED ] && put test_f1_$b "$(tail -n1 $b.json | jq -r .metrics.test_f1_illicit)"; done
put tap "$(cat tap.json)"
graphfed audit --nats $NATS --creds keys/auditor.nk --keyring keys/keyring.json --job $JOB --json > audit.json 2> audit.log
put audit_secure "$(tail -n1 audit.json | jq -c '.metrics.privacy.secure_aggregation // .privacy.secure_aggregation // empty')"
cat result.txt
