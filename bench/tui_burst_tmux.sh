#!/bin/bash
# The issue-22 walk typed into memtui in tmux as bursts of keys (tmux send-keys), N rounds on a
# fresh copy of `memtui demo`'s store with one CLI edit; prints the ledger's transactions after
# each round (2: nothing was written). Rounds cycle through four ways of cutting the walk into
# bursts (one burst; cut after home, after enter, after m: 0.3 s apart).
# usage: bench/tui_burst_tmux.sh [N=12]   (with the venv active; run it while the machine is busy)
set -u
N=${1:-12}
W=$(mktemp -d)
export MEMTUI_CONFIG=$W/config.toml MEMTUI_DATA=$W/data MEMTUI_NOW=2026-11-30T12:00:00Z
mkdir "$W/orig" && cd "$W/orig" && memtui demo --out demo.json --no-tui >/dev/null
first=$(python -c "from memtui.stores import open_store; print(open_store('demo.json').memories()[0].id)")
memtui edit demo.json "$first" --importance 0.5 >/dev/null
T="tmux -L memtui-burst"
for i in $(seq 1 "$N"); do
  rm -rf "$W/r" && cp -r "$W/orig" "$W/r"
  $T kill-server 2>/dev/null
  $T new-session -d -s r -x 160 -y 45 "cd $W/r && python -m memtui demo.json; sleep 30"
  for _ in $(seq 1 40); do sleep 0.25; $T capture-pane -p -t r | grep -q entries && break; done
  sleep 0.5
  case $((i % 4)) in
    0) $T send-keys -t r / 'board games' Enter Home Space Space m 'buy yes now undo';;
    1) $T send-keys -t r / 'board games' Enter Home; sleep 0.3; $T send-keys -t r Space Space m 'buy yes now undo';;
    2) $T send-keys -t r / 'board games' Enter; sleep 0.3; $T send-keys -t r Home Space Space m 'buy yes now undo';;
    3) $T send-keys -t r / 'board games' Enter Home Space Space m; sleep 0.3; $T send-keys -t r 'buy yes now undo';;
  esac
  sleep 3
  seen=$($T capture-pane -p -t r | grep -o -E "Undo\?|Undo done|came in a burst|merged text" | sort -u | tr '\n' ' ')
  shell=$($T display -p -t r "#{pane_pid}"); pid=$(pgrep -P "$shell" python | head -1)
  [ -n "$pid" ] && kill -TERM "$pid"; sleep 1
  n=$(python -c "from memtui.stores import open_store; print(len(open_store('$W/r/demo.json').history()))")
  echo "round $i (cut $((i % 4))): $n transactions; on screen: $seen"
done
$T kill-server 2>/dev/null
rm -rf "$W"
