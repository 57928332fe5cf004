#!/bin/sh
# The measurement queue, one job at a time (nice 15), in order of importance; each waits for the previous.
cd "$(dirname "$0")/.."
while pgrep -f "agent search:playouts=8 " > /dev/null; do sleep 10; done
nice -n 15 python -m training.match --agent search:playouts=32 --players 2 --games 400 --seed 7 --out reports_search/search_p32_2p.json > reports_search/search_p32_2p.txt 2>&1
nice -n 15 python -m training.match --agent oracle --players 4 --games 1000 --seed 1 --out reports_search/oracle_4p.json > reports_search/oracle_4p.txt 2>&1
nice -n 15 python -m training.match --agent oracle --players 2 --games 1000 --seed 1 --out reports_search/oracle_2p.json > reports_search/oracle_2p.txt 2>&1
nice -n 15 python -m training.expert_iteration --config configs/expert_iteration.yaml --no-progress > reports_search/expert_iteration.txt 2>&1
nice -n 15 python -m training.match --agent search:playouts=128 --players 2 --games 200 --seed 7 --out reports_search/search_p128_2p.json > reports_search/search_p128_2p.txt 2>&1
