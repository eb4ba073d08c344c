// Types for build.mjs: the esbuild options the origin is built with.
import type { BuildOptions } from "esbuild";

export declare const options: BuildOptions;
