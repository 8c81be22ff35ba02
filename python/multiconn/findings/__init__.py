"""Every finding of the four source studies, checked against our runs (`multiconn studies`).

* `listing`: the findings as data (`multiconn/studies/<study>.toml`), read and checked;
* `rule`: the one tolerance rule that turns the paper's value and ours into a verdict;
* `sources`: the runs behind our values (catalogue experiments, the multi-operator downloads);
* `evaluate`: our value for each finding and its verdict;
* `command`: the command line and the files it writes.

docs/studies.md describes the lists, the rule and the command.
"""
