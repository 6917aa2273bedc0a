package exit

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// SignalContext is the context of a real run: SIGINT or SIGTERM cancels
// it, with Signalled as the cause, and commands stop, roll back,
// remove their temporary files and return. A second signal is not caught:
// it ends opm at once. stop releases the signal handling.
func SignalContext() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs)
			cancel(Signalled{Signal: s})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// Causes is the chain of err's wrapped errors, one line each, for --debug.
func Causes(err error) []string {
	var out []string
	for depth := 0; err != nil && depth < 20; depth++ {
		out = append(out, fmt.Sprintf("%T: %s", err, strings.SplitN(err.Error(), "\n", 2)[0]))
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				for _, e := range j.Unwrap() {
					out = append(out, Causes(e)...)
				}
			}
			break
		}
		err = u.Unwrap()
	}
	return out
}
