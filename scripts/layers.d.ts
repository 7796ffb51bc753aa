// the types of scripts/layers.js, which eslint.config.js (plain JavaScript) reads too
export declare const LAYERS: readonly (readonly string[])[]
export declare function layerOf (folder: string): number | undefined
export declare function foldersAbove (folder: string): string[]
