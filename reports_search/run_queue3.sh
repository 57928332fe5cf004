#!/bin/sh
# After run_queue2.sh: the shipped network on generation 1's evaluation deals (seed 20000, its paired reference),
# then the budget curve's next point and more games at 128 playouts.
cd "$(dirname "$0")/.."
while pgrep -f "run_queue2.sh" > /dev/null; do sleep 10; done
for n in 2 4; do
  nice -n 15 python -m training.match --agent checkpoints/distill_lookahead --players $n --games 300 --seed 20000 --out reports_search/shipped_${n}p_seed20000.json > reports_search/shipped_${n}p_seed20000.txt 2>&1
done
nice -n 15 python -m training.match --agent search:playouts=256 --players 2 --games 400 --seed 7 --out reports_search/search_p256_2p.json > reports_search/search_p256_2p.txt 2>&1
nice -n 15 python -m training.match --agent search:playouts=128 --players 2 --games 400 --seed 8 --out reports_search/search_p128_2p_seed8.json > reports_search/search_p128_2p_seed8.txt 2>&1
