// Package olmclient proves that OLM's own registry client
// (operator-registry's pkg/client, the code OLM v0 and its tools run) reads
// opm's servers: opm registry serve over upstream's reference databases,
// and opm serve over the same catalogs migrated to FBC. It is a module of
// its own so that the product never imports operator-framework code.
package olmclient
