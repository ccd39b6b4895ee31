/**
 * Imported first by each program's entry point: turns off Node's deprecation warnings, which npm dependencies
 * trigger on import (the orchestrator client pulls in Node's deprecated `punycode`). They speak to the
 * dependencies' authors, not to an operator, and would be the first line of every error a program prints.
 *
 * @module
 */
import process from "node:process";

process.noDeprecation = true;
