#!/bin/sh
# Budget curve at 2 players (paired deals: every budget plays the same 300 cycles of seed 7); run after the oracle jobs.
while pgrep -f "training.match --agent oracle" > /dev/null; do sleep 10; done
for p in 8 32 128; do
  nice -n 15 python -m training.match --agent search:playouts=$p --players 2 --games 400 --seed 7 --out reports_search/search_p${p}_2p.json > reports_search/search_p${p}_2p.txt 2>&1
done
