package registry

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/opmkit/opm/internal/registry/api"
)

// registryServer answers api.Registry from a Backend.
type registryServer struct {
	api.UnimplementedRegistryServer
	b Backend
}

// NewGRPCServer returns a gRPC server answering api.Registry from b, with
// grpc.health.v1.Health and server reflection. Health answers every service
// name with the server's status, as upstream's registry does: OLM's own
// client (operator-registry's pkg/client) asks for "Registry",
// grpc_health_probe for "", others for "api.Registry". The caller serves it
// on a listener; the returned health server lets it report NOT_SERVING
// while stopping.
func NewGRPCServer(b Backend, opts ...grpc.ServerOption) (*grpc.Server, *health.Server) {
	s := grpc.NewServer(opts...)
	api.RegisterRegistryServer(s, &registryServer{b: b})
	h := health.NewServer()
	h.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	h.SetServingStatus(api.Registry_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s, anyService{h})
	reflection.Register(s)
	return s, h
}

// anyService answers a health check or watch of a service name the health
// server does not know with the server's overall status (service ""), so
// that no client's choice of name makes a serving catalog look down.
type anyService struct{ *health.Server }

func (a anyService) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	resp, err := a.Server.Check(ctx, req)
	if status.Code(err) == codes.NotFound && req.GetService() != "" {
		return a.Server.Check(ctx, &healthpb.HealthCheckRequest{})
	}
	return resp, err
}

func (a anyService) Watch(req *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	if svc := req.GetService(); svc != "" && svc != api.Registry_ServiceDesc.ServiceName {
		req = &healthpb.HealthCheckRequest{}
	}
	return a.Server.Watch(req, stream)
}

// answer turns a backend error into the status clients see. Like upstream,
// every failure, not-found included, is code Unknown with the error's text.
func answer(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return status.Error(codes.Canceled, err.Error())
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	return status.Error(codes.Unknown, bounded(err.Error()))
}

// maxAnswerText bounds an error's text: the not-found answers quote the
// request, and a 4 MB name must not come back as a 4 MB error.
const maxAnswerText = 1024

func bounded(msg string) string {
	if len(msg) <= maxAnswerText {
		return msg
	}
	cut := maxAnswerText
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes in all)", msg[:cut], len(msg))
}

func gvkOf(group, version, kind string) GVK { return GVK{Group: group, Version: version, Kind: kind} }

func (s *registryServer) ListPackages(_ *api.ListPackageRequest, stream grpc.ServerStreamingServer[api.PackageName]) error {
	return answer(s.b.ListPackages(stream.Context(), func(name string) error {
		return stream.Send(&api.PackageName{Name: name})
	}))
}

func (s *registryServer) GetPackage(ctx context.Context, req *api.GetPackageRequest) (*api.Package, error) {
	p, err := s.b.GetPackage(ctx, req.GetName())
	return p, answer(err)
}

func (s *registryServer) GetBundle(ctx context.Context, req *api.GetBundleRequest) (*api.Bundle, error) {
	b, err := s.b.GetBundle(ctx, req.GetPkgName(), req.GetChannelName(), req.GetCsvName())
	return b, answer(err)
}

func (s *registryServer) GetBundleForChannel(ctx context.Context, req *api.GetBundleInChannelRequest) (*api.Bundle, error) {
	b, err := s.b.GetBundleForChannel(ctx, req.GetPkgName(), req.GetChannelName())
	return b, answer(err)
}

func (s *registryServer) GetChannelEntriesThatReplace(req *api.GetAllReplacementsRequest, stream grpc.ServerStreamingServer[api.ChannelEntry]) error {
	return answer(s.b.GetChannelEntriesThatReplace(stream.Context(), req.GetCsvName(), stream.Send))
}

func (s *registryServer) GetBundleThatReplaces(ctx context.Context, req *api.GetReplacementRequest) (*api.Bundle, error) {
	b, err := s.b.GetBundleThatReplaces(ctx, req.GetCsvName(), req.GetPkgName(), req.GetChannelName())
	return b, answer(err)
}

func (s *registryServer) GetChannelEntriesThatProvide(req *api.GetAllProvidersRequest, stream grpc.ServerStreamingServer[api.ChannelEntry]) error {
	return answer(s.b.GetChannelEntriesThatProvide(stream.Context(), gvkOf(req.GetGroup(), req.GetVersion(), req.GetKind()), stream.Send))
}

func (s *registryServer) GetLatestChannelEntriesThatProvide(req *api.GetLatestProvidersRequest, stream grpc.ServerStreamingServer[api.ChannelEntry]) error {
	return answer(s.b.GetLatestChannelEntriesThatProvide(stream.Context(), gvkOf(req.GetGroup(), req.GetVersion(), req.GetKind()), stream.Send))
}

func (s *registryServer) GetDefaultBundleThatProvides(ctx context.Context, req *api.GetDefaultProviderRequest) (*api.Bundle, error) {
	b, err := s.b.GetDefaultBundleThatProvides(ctx, gvkOf(req.GetGroup(), req.GetVersion(), req.GetKind()))
	return b, answer(err)
}

func (s *registryServer) ListBundles(_ *api.ListBundlesRequest, stream grpc.ServerStreamingServer[api.Bundle]) error {
	return answer(s.b.ListBundles(stream.Context(), sendEncoded(stream)))
}

// sendEncoded sends each message encoded first: the send may wait for a
// client that does not read, and meanwhile the stream holds the message
// once, encoded, instead of also the message itself (a bundle with its
// manifests is held two or three times over in its decoded form).
func sendEncoded[T any](stream grpc.ServerStreamingServer[T]) func(*T) error {
	return func(m *T) error {
		var pm grpc.PreparedMsg
		if err := pm.Encode(stream, m); err != nil {
			return err
		}
		return stream.SendMsg(&pm)
	}
}
