// Mocha's spec reporter, which also appends this run's counts to $LTM_TEST_SUMMARY,
// so that scripts/test.sh can close with one "N passed, N failed" line for all suites.
'use strict';
const fs = require('node:fs');
const Mocha = require('mocha');

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once('end', () => {
      const file = process.env.LTM_TEST_SUMMARY;
      if (!file) return;
      const { passes, failures, pending } = this.stats;
      fs.appendFileSync(file, `${JSON.stringify({ passes, failures, pending })}\n`);
    });
  }
}

module.exports = SummaryReporter;
