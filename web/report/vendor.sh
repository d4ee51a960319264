#!/bin/sh
# Vendor the backtest report's JavaScript into the Python package (botkit/backtest/assets).
#
# The report page inlines Lightweight Charts (TradingView, Apache-2.0) so it opens offline;
# the package ships the built file, so installing botkit needs no npm. This script is the only
# way the file changes: `npm ci` installs exactly what package-lock.json pins (integrity hashes
# checked by npm), then the standalone production build and its licence are copied and
# SHA256SUMS is rewritten (tests/backtest/test_report_assets.py checks the sums). To upgrade:
# change the version in package.json, `npm install --ignore-scripts`, run this, commit all.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
assets="$here/../../botkit/backtest/assets"
cd "$here"
npm ci --ignore-scripts --no-audit --no-fund
mkdir -p "$assets"
cp node_modules/lightweight-charts/dist/lightweight-charts.standalone.production.js \
   "$assets/lightweight-charts.standalone.production.js"
cp node_modules/lightweight-charts/LICENSE "$assets/lightweight-charts.LICENSE"
cd "$assets"
sha256sum lightweight-charts.standalone.production.js lightweight-charts.LICENSE > SHA256SUMS
cat SHA256SUMS
