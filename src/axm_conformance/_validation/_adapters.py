"""Adapt jsonschema, jsonschema-rs and fastjsonschema as validators.

Each is certifiable by reference, e.g. ``axm_conformance._validation:jsonschema_rs_validate``, and
reads the draft from the schema's ``$schema``, which the kit sets on every schema it gives (see
`declared`). The jsonschema-rs and fastjsonschema adapters import their package on first call and
raise `ImportError` naming the package to install when it is absent.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Callable
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.protocols import Validator
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource
from referencing.jsonschema import specification_with

from axm_conformance._validation._remotes import remote_document


@functools.lru_cache(maxsize=1024)
def _reference(text: str) -> Validator:
    schema = json.loads(text)
    cls = validators.validator_for(schema, default=Draft202012Validator)
    validator: Validator = cls(schema, registry=_remotes(cls.META_SCHEMA["$schema"]))
    return validator


@functools.cache
def _remotes(dialect: str) -> Registry[Any]:
    """The suite's remote documents, read from this package (never fetched), each read as the
    draft that refers to it unless it names its own."""
    specification = specification_with(dialect)

    def retrieve(uri: str) -> Resource[Any]:
        try:
            contents = remote_document(uri)
        except LookupError:
            raise NoSuchResource(ref=uri) from None  # type: ignore[call-arg]
        return Resource.from_contents(contents, default_specification=specification)

    return Registry(retrieve=retrieve)  # type: ignore[call-arg]


def _text(schema: Any) -> str:
    # 1 and 1.0, or true and 1, stay apart: a cache key, not a canonical form
    return json.dumps(schema, sort_keys=True)


def jsonschema_validate(data: Any, schema: Any) -> bool:
    """jsonschema, of the draft ``$schema`` names (2020-12 without one), format not asserted.

    Python's regular expressions and floats included: the oracle (`Oracle`) is jsonschema made
    to follow the specification where these do not.
    """
    return bool(_reference(_text(schema)).is_valid(data))


def _optional(module: str, distribution: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            f"{module} is not installed: pip install {distribution} to certify it"
        ) from None


@functools.lru_cache(maxsize=1024)
def _rs_validator(text: str) -> Any:
    module = _optional("jsonschema_rs", "jsonschema-rs")
    return module.validator_for(json.loads(text), validate_formats=False)


def jsonschema_rs_validate(data: Any, schema: Any) -> bool:
    """jsonschema-rs (Rust), of the draft ``$schema`` names (2020-12 without one), format not
    asserted: ``is_valid`` of the schema.

    Compiled validators are cached by schema text. Raises `ImportError` when jsonschema-rs is
    absent, and jsonschema-rs's own error for a schema it refuses.
    """
    return bool(_rs_validator(_text(schema)).is_valid(data))


@functools.lru_cache(maxsize=1024)
def _fast_validator(text: str) -> Callable[[Any], Any]:
    module = _optional("fastjsonschema", "fastjsonschema")
    # use_default=False: fastjsonschema would otherwise write defaults into the data it checks
    compiled: Callable[[Any], Any] = module.compile(
        json.loads(text), use_default=False, use_formats=False
    )
    return compiled


def fastjsonschema_validate(data: Any, schema: Any) -> bool:
    """fastjsonschema, format not asserted: False when it raises ``JsonSchemaValueException``.

    fastjsonschema implements drafts 4, 6 and 7 only; a 2020-12 schema is read as its
    ``$schema`` says, or as draft 7, so keywords new in 2019-09/2020-12 are ignored. Raises
    `ImportError` when fastjsonschema is absent, and its ``JsonSchemaDefinitionException`` for
    a schema it cannot compile.
    """
    check = _fast_validator(_text(schema))
    module = _optional("fastjsonschema", "fastjsonschema")
    try:
        check(data)
    except module.JsonSchemaValueException:
        return False
    return True
