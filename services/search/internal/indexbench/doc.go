// Package indexbench measures the two local indexes side by side (bleve on
// disk, PostgreSQL full-text search): retrieval quality on the labelled
// enrichment set (eval/enrichment-*.json over examples/runbooks and
// docs/runbooks: hit@1, hit@5 and MRR of the labelled runbooks), and query
// latency and index throughput on generated corpora of 10,000 and 100,000
// documents. It holds only tests and benchmarks; BENCHMARKS.md records
// the figures.
package indexbench
