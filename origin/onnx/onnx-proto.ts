// The subset of the ONNX model format a decoder graph uses, for protobufjs: enough to read,
// rewrite and write a model.
import protobuf from "protobufjs";

const SCHEMA = `
syntax = "proto2";
package onnx;
message AttributeProto {
  optional string name = 1; optional string ref_attr_name = 21; optional string doc_string = 13;
  optional int32 type = 20; optional float f = 2; optional int64 i = 3; optional bytes s = 4;
  optional TensorProto t = 5; optional GraphProto g = 6;
  repeated float floats = 7; repeated int64 ints = 8; repeated bytes strings = 9;
  repeated TensorProto tensors = 10; repeated GraphProto graphs = 11;
}
message ValueInfoProto { optional string name = 1; optional TypeProto type = 2; optional string doc_string = 3; }
message NodeProto {
  repeated string input = 1; repeated string output = 2; optional string name = 3; optional string op_type = 4;
  optional string domain = 7; repeated AttributeProto attribute = 5; optional string doc_string = 6;
}
message StringStringEntryProto { optional string key = 1; optional string value = 2; }
message OperatorSetIdProto { optional string domain = 1; optional int64 version = 2; }
message ModelProto {
  optional int64 ir_version = 1; repeated OperatorSetIdProto opset_import = 8; optional string producer_name = 2;
  optional string producer_version = 3; optional string domain = 4; optional int64 model_version = 5;
  optional string doc_string = 6; optional GraphProto graph = 7; repeated StringStringEntryProto metadata_props = 14;
}
message GraphProto {
  repeated NodeProto node = 1; optional string name = 2; repeated TensorProto initializer = 5;
  optional string doc_string = 10; repeated ValueInfoProto input = 11; repeated ValueInfoProto output = 12;
  repeated ValueInfoProto value_info = 13;
}
message TensorProto {
  repeated int64 dims = 1; optional int32 data_type = 2; repeated float float_data = 4 [packed = true];
  repeated int32 int32_data = 5 [packed = true]; repeated bytes string_data = 6; repeated int64 int64_data = 7 [packed = true];
  optional string name = 8; optional string doc_string = 12; optional bytes raw_data = 9;
  repeated StringStringEntryProto external_data = 13; optional int32 data_location = 14;
  repeated double double_data = 10 [packed = true]; repeated uint64 uint64_data = 11 [packed = true];
}
message TensorShapeProto {
  message Dimension { oneof value { int64 dim_value = 1; string dim_param = 2; } optional string denotation = 3; }
  repeated Dimension dim = 1;
}
message TypeProto {
  message Tensor { optional int32 elem_type = 1; optional TensorShapeProto shape = 2; }
  oneof value { Tensor tensor_type = 1; }
  optional string denotation = 6;
}
`;

const root = protobuf.parse(SCHEMA).root;
const ModelProto = root.lookupType("onnx.ModelProto");

export interface OnnxAttribute {
  name: string;
  type?: number;
  i?: number | protobuf.Long;
  ints?: (number | protobuf.Long)[];
  f?: number;
  t?: OnnxTensor;
}
export interface OnnxNode {
  input: string[];
  output: string[];
  name?: string;
  opType?: string;
  domain?: string;
  attribute?: OnnxAttribute[];
}
export interface OnnxTensor {
  name?: string;
  dims?: (number | protobuf.Long)[];
  dataType?: number;
  int64Data?: (number | protobuf.Long)[];
  rawData?: Uint8Array;
}
export interface OnnxValueInfo {
  name: string;
  type?: {
    tensorType?: {
      elemType?: number;
      shape?: { dim?: { dimValue?: number | protobuf.Long; dimParam?: string }[] };
    };
  };
}
export interface OnnxGraph {
  node: OnnxNode[];
  initializer: OnnxTensor[];
  input: OnnxValueInfo[];
  output: OnnxValueInfo[];
  valueInfo?: OnnxValueInfo[];
}
export interface OnnxModel {
  graph: OnnxGraph;
}

/** Decodes a model's bytes into plain objects (protobufjs' camelCase field names). */
export function decodeModel(bytes: Uint8Array): OnnxModel {
  const message = ModelProto.decode(bytes);
  const model = ModelProto.toObject(message, { defaults: false, arrays: true }) as OnnxModel;
  model.graph.valueInfo ??= [];
  return model;
}

export function encodeModel(model: OnnxModel): Uint8Array {
  return ModelProto.encode(ModelProto.fromObject(model)).finish();
}
