# Ubunye: `make help` lists the targets. Everything a target needs it sets up itself.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
VERSION := $(shell cat python/ubunye/VERSION)
# One jar per Spark line (build.sbt): Spark 3.5 / Scala 2.12 and 2.13, Spark 4.0 / 2.13, Spark 4.1 to 4.3 / 2.13.
JAR_LINES := spark-3.5_2.12 spark-3.5_2.13 spark-4.0_2.13 spark-4.1_2.13
JARS := $(foreach l,$(JAR_LINES),python/ubunye/jars/ubunye-$(l)-$(VERSION).jar)
SCALA_SRC := $(shell find jvm/src/main -type f 2>/dev/null) build.sbt project/build.properties project/SparkLine.scala
SBT := bash tools/sbt

.PHONY: help setup jar jvm-test lint quick fuzz pytest pandas2 floors spark-lines dbr-stacks test demo bench clean

help: ## List the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 12

$(STAMP): python/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e "python[test]"
	touch $(STAMP)

setup: $(STAMP) ## Create .venv and install the package with its pinned test extras (quick when done)

# One sbt run builds every line (a grouped target); the new jars are copied in before the stale ones go, so a
# session starting meanwhile always finds one, and each by a rename, so a JVM running meanwhile keeps reading
# the file it opened (a copy over it in place would change the bytes under it).
$(JARS) &: $(SCALA_SRC)
	$(SBT) package
	mkdir -p python/ubunye/jars
	$(foreach l,$(JAR_LINES),cp jvm/target/$(l)/scala-$(lastword $(subst _, ,$(l)))/ubunye-$(l)-$(VERSION).jar python/ubunye/jars/.new.jar && mv python/ubunye/jars/.new.jar python/ubunye/jars/ubunye-$(l)-$(VERSION).jar &&) true
	find python/ubunye/jars -name '*.jar' $(foreach j,$(JARS),! -name $(notdir $(j))) -delete
	touch $(JARS)

jar: $(JARS) ## Build the Spark jars of every line with sbt (fetched from Maven Central on first use)

jvm-test: ## Run the JVM unit tests (ScalaTest) on every line: Spark 3.5 / 2.12 and 2.13, 4.0, 4.1
	$(SBT) test

lint: setup ## ruff over the Python package and tests, mypy (strict) over the package
	$(VENV)/bin/ruff check python tests
	$(VENV)/bin/ruff format --check python tests
	$(VENV)/bin/mypy --config-file python/pyproject.toml python/ubunye
	# The package runs on Python 3.10 too (Databricks 14.3 LTS): type-checked for it as well.
	$(VENV)/bin/mypy --config-file python/pyproject.toml --python-version 3.10 python/ubunye

# No jar and no JVM: the tests that need Spark or the jar are marked `spark` from the fixtures they take
# (tests/conftest.py), so this tier builds nothing with sbt and starts no Spark.
quick: lint ## The tier without jar or Spark: ruff, mypy (make lint) and pytest -m "not spark"
	$(VENV)/bin/pytest -q -m "not spark" tests

# The generated (hypothesis) tests draw fixed examples in the gate (tests/conftest.py: profile "gate"); this draws
# fresh ones, FUZZ_ROUNDS times over, without Spark. A failure prints the example and a @reproduce_failure blob.
FUZZ_ROUNDS ?= 5
FUZZ_TESTS := tests/hashing/test_generated_tables.py tests/hashing/test_properties.py tests/engines/test_delta_incremental.py tests/lineage/test_file_profiles.py
fuzz: setup ## Generated tests with fresh random examples (FUZZ_ROUNDS rounds; the gate draws fixed ones)
	@for i in $$(seq $(FUZZ_ROUNDS)); do \
	  echo "--- fuzz round $$i of $(FUZZ_ROUNDS)"; \
	  $(VENV)/bin/pytest -q -p no:cacheprovider -m "not spark" --hypothesis-profile explore $(FUZZ_TESTS) || exit 1; \
	done

pytest: setup jar ## Run the Python test suite only
	$(VENV)/bin/pytest -q tests

PANDAS2_VENV := .venv-pandas2
PANDAS2_STAMP := $(PANDAS2_VENV)/.installed

$(PANDAS2_STAMP): python/pyproject.toml
	test -x $(PANDAS2_VENV)/bin/python || $(PYTHON) -m venv $(PANDAS2_VENV)
	$(PANDAS2_VENV)/bin/pip install -q "pandas==2.2.3" "numpy==2.3.5" "pyarrow==26.0.1" "pytest==9.2.0" "hypothesis==6.170.17" "polars==2.1.0" "duckdb==2.0.1"
	$(PANDAS2_VENV)/bin/pip install -q --no-deps -e python
	touch $(PANDAS2_STAMP)

pandas2: $(PANDAS2_STAMP) ## The twin's tests again on pandas 2.2 / numpy 2.3 (the main venv has pandas 3)
	$(PANDAS2_VENV)/bin/pytest -q -p no:cacheprovider tests/hashing

# The oldest numpy / pandas / pyarrow the twin is measured to give the right bytes with (python/pyproject.toml's
# floors): what Databricks 15.4 LTS ships (.venv-floors) and 16.4 LTS's set (.venv-floors16), both on this Python.
# The twin's tests and the conformance vectors on each; pyarrow < 16 has no view types and these venvs have no
# polars or DuckDB, so the tests of those skip, saying so. deltalake (with pyyaml and jinja2, for IOConfig) is there
# for the Delta-as-Arrow refusal (its Arrow side needs pyarrow >= 21: tests/hashing/test_delta_pyarrow.py). The
# venvs share pip's cache; --no-compile: only the modules the tests import get byte-compiled (on import), which
# halves the install time.
FLOORS_VENVS := .venv-floors .venv-floors16
FLOORS_TEST_PINS := "pytest==9.2.0" "hypothesis==6.170.17" "deltalake==1.6.6" "pyyaml==6.0.4" "jinja2==3.1.6"
.venv-floors/.installed: FLOORS_PINS := "numpy==1.23.5" "pandas==1.5.3" "pyarrow==14.0.1"
.venv-floors16/.installed: FLOORS_PINS := "numpy==1.26.4" "pandas==1.5.3" "pyarrow==15.0.2"

# One `pip install -e python` at a time (setuptools writes python/ubunye.egg-info in the source tree): under
# `make test`'s -j2 the pandas 2 and floors venvs would otherwise be installed side by side.
.venv-floors/.installed: $(PANDAS2_STAMP)
.venv-floors16/.installed: .venv-floors/.installed

$(addsuffix /.installed,$(FLOORS_VENVS)): python/pyproject.toml
	test -x $(@D)/bin/python || $(PYTHON) -m venv $(@D)
	$(@D)/bin/pip install -q --no-compile $(FLOORS_PINS) $(FLOORS_TEST_PINS)
	$(@D)/bin/pip install -q --no-deps -e python
	touch $@

floors: $(addsuffix /.installed,$(FLOORS_VENVS)) ## The twin's tests, the vectors and expectation kinds on the package floors (Databricks 15.4 and 16.4 LTS sets)
	@for v in $(FLOORS_VENVS); do \
	  echo "--- $$v: $$($$v/bin/python -c 'import numpy, pandas, pyarrow; print("numpy", numpy.__version__, "pandas", pandas.__version__, "pyarrow", pyarrow.__version__)')"; \
	  $$v/bin/pytest -q -p no:cacheprovider tests/hashing tests/test_expectation_kinds.py || exit 1; \
	done

# --- other Spark lines: the conformance tier (tests/lines) in one venv per pyspark line --------------------------
# The main venv runs the whole suite on pyspark 4.2; these run the conformance vectors, JVM = jar-free = twin,
# incremental Delta (where the line has delta-spark jars) and the Spark engine (a task's receipts, from_pandas,
# diff) on pyspark 3.5 (Scala 2.12 jar), 4.0 (the 4.0 jar, which the main suite never loads) and the newest 4.x
# (4.3), each in a fresh session, with the package's own dependencies. The venvs share pip's
# cache (the same numpy / pandas / pyarrow wheels as the main venv). More lines: make spark-lines SPARK_LINES="3.5.9 4.0.5 4.1.4 4.3.0"
SPARK_LINES ?= 3.5.9 4.0.5 4.3.0
LINE_PINS := "numpy==2.4.6" "pandas==3.1.1" "pyarrow==26.0.1" "pytest==9.2.0"

.venv-spark-%/.installed: python/pyproject.toml
	test -x .venv-spark-$*/bin/python || $(PYTHON) -m venv .venv-spark-$*
	.venv-spark-$*/bin/pip install -q "pyspark==$*" $(LINE_PINS)
	.venv-spark-$*/bin/pip install -q -e python
	touch $@

spark-lines: jar $(foreach v,$(SPARK_LINES),.venv-spark-$(v)/.installed) ## Conformance tier on pyspark 3.5, 4.0 and the newest 4.x (extra venvs)
	@for v in $(SPARK_LINES); do \
	  echo "--- pyspark $$v"; \
	  UBUNYE_SPARK_LINE_TIER=1 .venv-spark-$$v/bin/pytest -q -p no:cacheprovider tests/lines || exit 1; \
	done

# --- optional, not in `make test`: the Databricks LTS stacks ------------------------------------------------------
# The Spark-lines tier on the Spark, Python and numpy / pandas / pyarrow each LTS runtime ships (its release notes):
# 14.3 (Spark 3.5.0, Python 3.10; it ships pyarrow 8, below the package's floor, which `%pip install ubunye`
# upgrades there: here the floor, 14.0.1), 15.4 (3.5.0, Python 3.11), 16.4 (3.5.2, 3.12: here 3.11, as PyPI has no
# pandas 1.5.3 for 3.12 and its source build fails), 17.3 (4.0.0, 3.12). Each
# stack's Python must be on PATH (python3.10, python3.12: pyenv, deadsnakes, ...); Databricks' Spark is a fork, and
# Delta there is built in (here delta-spark from Maven Central). The pins are passed again with the package, so pip
# refuses rather than upgrades them. About 10 minutes a stack on 2 cores. One: make dbr-stacks DBR_STACKS=14.3
DBR_STACKS ?= 14.3 15.4 16.4 17.3
.venv-dbr-14.3/.installed: DBR_PINS := "pyspark==3.5.0" "numpy==1.23.5" "pandas==1.5.3" "pyarrow==14.0.1"
.venv-dbr-14.3/.installed: DBR_PY := python3.10
.venv-dbr-15.4/.installed: DBR_PINS := "pyspark==3.5.0" "numpy==1.23.5" "pandas==1.5.3" "pyarrow==14.0.1"
.venv-dbr-15.4/.installed: DBR_PY := python3.11
.venv-dbr-16.4/.installed: DBR_PINS := "pyspark==3.5.2" "numpy==1.26.4" "pandas==1.5.3" "pyarrow==15.0.2"
.venv-dbr-16.4/.installed: DBR_PY := python3.11
.venv-dbr-17.3/.installed: DBR_PINS := "pyspark==4.0.0" "numpy==2.1.3" "pandas==2.2.3" "pyarrow==19.0.1"
.venv-dbr-17.3/.installed: DBR_PY := python3.12

.venv-dbr-%/.installed: python/pyproject.toml
	test -n '$(DBR_PINS)' || { echo "no pins for Databricks $* LTS (known: 14.3 15.4 16.4 17.3)"; exit 1; }
	$(DBR_PY) -c pass 2>/dev/null || { echo "the Databricks $* LTS stack runs on $(DBR_PY): put one on PATH to test it"; exit 1; }
	test "$$(.venv-dbr-$*/bin/python -c 'import sys; print("python%d.%d" % sys.version_info[:2])' 2>/dev/null)" = $(DBR_PY) \
	  || { rm -rf .venv-dbr-$* && $(DBR_PY) -m venv .venv-dbr-$*; }
	.venv-dbr-$*/bin/pip install -q $(DBR_PINS) "pytest==9.2.0"
	.venv-dbr-$*/bin/pip install -q -e python $(DBR_PINS)
	touch $@

dbr-stacks: jar $(foreach s,$(DBR_STACKS),.venv-dbr-$(s)/.installed) ## Optional (not in make test): Spark-lines tier on the Databricks 14.3/15.4/16.4/17.3 LTS stacks
	@for s in $(DBR_STACKS); do \
	  echo "--- Databricks $$s LTS stack: $$(.venv-dbr-$$s/bin/python -c 'import pyspark, numpy, pandas, pyarrow; import sys; print("python %d.%d" % sys.version_info[:2], "pyspark", pyspark.__version__, "numpy", numpy.__version__, "pandas", pandas.__version__, "pyarrow", pyarrow.__version__)')"; \
	  UBUNYE_SPARK_LINE_TIER=1 .venv-dbr-$$s/bin/pytest -q -p no:cacheprovider tests/lines || exit 1; \
	done

# The JVM tests (one JVM at a time) and the Python-only tiers (lint, pandas 2, floors: one Python process each) run
# two at a time, each tier's output printed whole when it ends; then the Spark tiers, which take both cores.
test: setup jar ## Everything CI runs: setup, jar, JVM tests, lint, pytest, pandas 2, floors, Spark lines
	@$(MAKE) --no-print-directory -j2 --output-sync=target jvm-test lint pandas2 floors
	@$(MAKE) --no-print-directory pytest spark-lines

demo: setup jar ## Run the example job on its embedded default data and show the record
	$(PY) -m ubunye.demo

bench: setup jar ## Benchmarks (rows/s side by side, one run); results go in README.md
	$(PY) -m benchmarks.run

clean: ## Remove build outputs (keeps .venv)
	rm -rf jvm/target target project/target python/ubunye/jars .pytest_cache .ruff_cache
