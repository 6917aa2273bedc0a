// Command servecalls measures how many calls per second a running
// api.Registry server answers: -inflight calls at a time over -conns
// connections, for -duration, each call asking for the next package (or
// channel, or bundle) of the catalog in turn. bench/serve-compare.sh runs it
// against opm's and upstream's servers side by side.
//
//	go run ./bench/servecalls -addr 127.0.0.1:50051 -method GetBundleForChannel -inflight 20
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/opmkit/opm/internal/registry/api"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "server address")
	method := flag.String("method", "GetPackage", "GetPackage, GetBundleForChannel, GetBundle or ListPackages")
	conns := flag.Int("conns", 1, "connections")
	inflight := flag.Int("inflight", 20, "calls in flight at once, spread over the connections")
	duration := flag.Duration("duration", 5*time.Second, "how long to call")
	warmup := flag.Duration("warmup", time.Second, "calls before measuring")
	flag.Parse()
	if err := run(*addr, *method, *conns, *inflight, *duration, *warmup); err != nil {
		fmt.Fprintln(os.Stderr, "servecalls:", err)
		os.Exit(1)
	}
}

type target struct{ pkg, channel, bundle string }

func run(addr, method string, nconns, inflight int, duration, warmup time.Duration) error {
	var clients []api.RegistryClient
	for range nconns {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
		if err != nil {
			return err
		}
		defer func() { _ = conn.Close() }()
		clients = append(clients, api.NewRegistryClient(conn))
	}
	targets, err := catalog(clients[0])
	if err != nil {
		return err
	}
	call, err := caller(method)
	if err != nil {
		return err
	}
	var next, done atomic.Int64
	var measuring atomic.Bool
	var firstErr error
	var errOnce sync.Once
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range inflight {
		wg.Add(1)
		go func(c api.RegistryClient) {
			defer wg.Done()
			for ctx.Err() == nil {
				t := targets[int(next.Add(1))%len(targets)]
				if err := call(ctx, c, t); err != nil {
					if ctx.Err() == nil {
						errOnce.Do(func() { firstErr = err; cancel() })
					}
					return
				}
				if measuring.Load() {
					done.Add(1)
				}
			}
		}(clients[i%len(clients)])
	}
	time.Sleep(warmup)
	measuring.Store(true)
	start := time.Now()
	time.Sleep(duration)
	n := done.Load()
	elapsed := time.Since(start)
	cancel()
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	fmt.Printf("%.0f\n", float64(n)/elapsed.Seconds())
	return nil
}

// catalog lists every package's channels and their heads.
func catalog(c api.RegistryClient) ([]target, error) {
	ctx := context.Background()
	s, err := c.ListPackages(ctx, &api.ListPackageRequest{})
	if err != nil {
		return nil, err
	}
	var names []string
	for {
		p, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		names = append(names, p.GetName())
	}
	sort.Strings(names)
	var out []target
	for _, n := range names {
		p, err := c.GetPackage(ctx, &api.GetPackageRequest{Name: n})
		if err != nil {
			return nil, err
		}
		for _, ch := range p.GetChannels() {
			out = append(out, target{n, ch.GetName(), ch.GetCsvName()})
		}
	}
	if len(out) == 0 {
		return nil, errors.New("the catalog has no channels")
	}
	return out, nil
}

func caller(method string) (func(context.Context, api.RegistryClient, target) error, error) {
	switch method {
	case "GetPackage":
		return func(ctx context.Context, c api.RegistryClient, t target) error {
			_, err := c.GetPackage(ctx, &api.GetPackageRequest{Name: t.pkg})
			return err
		}, nil
	case "GetBundleForChannel":
		return func(ctx context.Context, c api.RegistryClient, t target) error {
			//nolint:staticcheck // measured because clients (OLM) still call it
			_, err := c.GetBundleForChannel(ctx, &api.GetBundleInChannelRequest{PkgName: t.pkg, ChannelName: t.channel})
			return err
		}, nil
	case "GetBundle":
		return func(ctx context.Context, c api.RegistryClient, t target) error {
			_, err := c.GetBundle(ctx, &api.GetBundleRequest{PkgName: t.pkg, ChannelName: t.channel, CsvName: t.bundle})
			return err
		}, nil
	case "ListPackages":
		return func(ctx context.Context, c api.RegistryClient, _ target) error {
			s, err := c.ListPackages(ctx, &api.ListPackageRequest{})
			if err != nil {
				return err
			}
			for {
				if _, err := s.Recv(); err != nil {
					if errors.Is(err, io.EOF) {
						return nil
					}
					return err
				}
			}
		}, nil
	}
	return nil, fmt.Errorf("unknown method %q", method)
}
