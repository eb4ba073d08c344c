// Types of scripts/build-playground.mjs for the TypeScript tests that import it.
export declare const OUTPUT: string;
export declare function buildPlayground(): Promise<string>;
