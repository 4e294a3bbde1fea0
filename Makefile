# Ubunye: `make help` lists the targets. Everything a target needs it sets up itself.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
VERSION := $(shell cat python/ubunye/VERSION)
JAR := python/ubunye/jars/ubunye-spark_2.13-$(VERSION).jar
SCALA_SRC := $(shell find jvm/src/main -name '*.scala' -o -name '*Provider' 2>/dev/null) build.sbt project/build.properties
SBT := bash tools/sbt

.PHONY: help setup jar jvm-test lint pytest pandas2 test demo bench clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 12

$(STAMP): python/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e "python[test]"
	touch $(STAMP)

setup: $(STAMP) ## Create .venv and install the package with its pinned test extras (quick when done)

$(JAR): $(SCALA_SRC)
	$(SBT) package
	mkdir -p python/ubunye/jars
	rm -f python/ubunye/jars/*.jar
	cp jvm/target/scala-2.13/ubunye-spark_2.13-$(VERSION).jar $(JAR)

jar: $(JAR) ## Build the Spark jar with sbt (fetched from Maven Central on first use)

jvm-test: ## Run the JVM unit tests (ScalaTest)
	$(SBT) test

lint: setup ## ruff over the Python package and tests
	$(VENV)/bin/ruff check python tests
	$(VENV)/bin/ruff format --check python tests

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

test: setup jar jvm-test lint pytest pandas2 ## Everything CI runs: setup, jar, JVM tests, lint, pytest, pandas 2

demo: setup jar ## Run the example job on its embedded default data and show the record
	$(PY) -m ubunye.demo

bench: setup jar ## Benchmarks (rows/s side by side, one run); results go in README.md
	$(PY) -m benchmarks.run

clean: ## Remove build outputs (keeps .venv)
	rm -rf jvm/target target project/target python/ubunye/jars .pytest_cache .ruff_cache
