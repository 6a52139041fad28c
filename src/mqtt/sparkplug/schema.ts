// The Sparkplug B payload of the Sparkplug 3.0 specification (its protobuf schema, proto2), written
// out here from the specification's field list and compiled at start by protobufjs (codec.ts). A
// string rather than a .proto file beside the sources, so the build has nothing to copy.

/** The scalars every `oneof value` of the schema starts with, in this order. */
const SCALARS = [
  'uint32 int_value',
  'uint64 long_value',
  'float float_value',
  'double double_value',
  'bool boolean_value',
  'string string_value',
];

/**
 * A `oneof value` numbered from `first`: the scalars, then `more`, then `extension_value` of the
 * message `extension` (declared beside it, open to extensions), as the specification has them.
 */
function valueOf(first: number, extension: string, more: string[] = []): string {
  const fields = [...SCALARS, ...more, `${extension} extension_value`];
  return `oneof value {
${fields.map((f, i) => `  ${f} = ${first + i};`).join('\n')}
}
message ${extension} {
  extensions 1 to max;
}`;
}

export const SPARKPLUG_B_PROTO = `
syntax = "proto2";
package org.eclipse.tahu.protobuf;

message Payload {
  message Template {
    message Parameter {
      optional string name = 1;
      optional uint32 type = 2;
      ${valueOf(3, 'ParameterValueExtension')}
    }
    optional string version = 1;
    repeated Metric metrics = 2;
    repeated Parameter parameters = 3;
    optional string template_ref = 4;
    optional bool is_definition = 5;
    extensions 6 to max;
  }

  message DataSet {
    message DataSetValue {
      ${valueOf(1, 'DataSetValueExtension')}
    }
    message Row {
      repeated DataSetValue elements = 1;
      extensions 2 to max;
    }
    optional uint64 num_of_columns = 1;
    repeated string columns = 2;
    repeated uint32 types = 3;
    repeated Row rows = 4;
    extensions 5 to max;
  }

  message PropertyValue {
    optional uint32 type = 1;
    optional bool is_null = 2;
    ${valueOf(3, 'PropertyValueExtension', ['PropertySet propertyset_value', 'PropertySetList propertysets_value'])}
  }

  message PropertySet {
    repeated string keys = 1;
    repeated PropertyValue values = 2;
    extensions 3 to max;
  }

  message PropertySetList {
    repeated PropertySet propertyset = 1;
    extensions 2 to max;
  }

  message MetaData {
    optional bool is_multi_part = 1;
    optional string content_type = 2;
    optional uint64 size = 3;
    optional uint64 seq = 4;
    optional string file_name = 5;
    optional string file_type = 6;
    optional string md5 = 7;
    optional string description = 8;
    extensions 9 to max;
  }

  message Metric {
    optional string name = 1;
    optional uint64 alias = 2;
    optional uint64 timestamp = 3;
    optional uint32 datatype = 4;
    optional bool is_historical = 5;
    optional bool is_transient = 6;
    optional bool is_null = 7;
    optional MetaData metadata = 8;
    optional PropertySet properties = 9;
    ${valueOf(10, 'MetricValueExtension', ['bytes bytes_value', 'DataSet dataset_value', 'Template template_value'])}
  }

  optional uint64 timestamp = 1;
  repeated Metric metrics = 2;
  optional uint64 seq = 3;
  optional string uuid = 4;
  optional bytes body = 5;
  extensions 6 to max;
}
`;
