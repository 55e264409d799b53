// Package interceptorpb holds the generated Go code of interceptor.proto, the
// contract of an external interceptor (package tlb.interceptor.v1). It is
// generated only: edit the .proto and run go generate (needs protoc,
// protoc-gen-go and protoc-gen-go-grpc on PATH).
package interceptorpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative interceptor.proto
