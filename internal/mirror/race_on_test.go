//go:build race

package mirror

// raceDetector: the race detector's instrumentation allocates, which
// allocation bounds measured without it do not allow for.
const raceDetector = true
